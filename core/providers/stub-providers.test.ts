import { describe, expect, it } from "vitest";
import type { AudioRef } from "./provider-port";
import { stubTranscriber } from "./stub-providers";

const audio = (durationMs: number | null): AudioRef => ({ appId: "a", cid: "bafkreistubstubstubabcdefgh", mimeType: "audio/wav", size: 1, durationMs });
const call = { signal: new AbortController().signal, deadline: Infinity };

describe("the stub transcriber", () => {
  it("is deterministic: the same audio gives the same transcript, with words, speakers and a language", async () => {
    const first = await stubTranscriber().transcribe(audio(10_000), call);
    expect(await stubTranscriber().transcribe(audio(10_000), call)).toEqual(first);
    expect(first.text).toMatch(/^Stub transcript of abcdefgh\. \S/);
    expect(first.lang).toBe("en");
    expect(new Set(first.segments!.map((s) => s.speaker))).toEqual(new Set(["speaker_0", "speaker_1"]));
    expect(first.segments!.flatMap((s) => s.words!).map((w) => w.text).join(" ")).toBe(first.text);
  });

  it("speaks for the audio's whole duration, a word every 400 ms, however short", async () => {
    const hour = await stubTranscriber().transcribe(audio(3_600_000), call);
    const words = hour.segments!.flatMap((s) => s.words!);
    expect(words).toHaveLength(9000);
    expect(words.at(-1)!.endMs).toBeLessThanOrEqual(3_600_000);
    const short = await stubTranscriber().transcribe(audio(null), call);
    expect(short.text).toMatch(/^Stub transcript of abcdefgh\.$/);
    expect(short.segments).toHaveLength(1);
  });
});
