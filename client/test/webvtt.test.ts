import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noiseWav } from "../../test/support/seeded-audio";
import type { TestService } from "../../test/support/test-service";
import { createClient, toWebVTT, type TimedSegment } from "../src/index";
import { vttTimestamp } from "../src/webvtt";
import { freshActor, startClientService } from "./support/client-harness";

const cuesOf = (vtt: string) =>
  vtt
    .split("\n\n")
    .slice(1)
    .map((block) => {
      const [timing, ...text] = block.trim().split("\n");
      const [start, end] = timing!.split(" --> ");
      return { start, end, text: text.join("\n") };
    });

const timed = (text: string, startMs: number, msPerWord: number): TimedSegment => {
  const words = text.split(" ").map((word, i) => ({ text: word, startMs: startMs + i * msPerWord, endMs: startMs + (i + 1) * msPerWord - 50 }));
  return { text, startMs, endMs: words.at(-1)!.endMs, words };
};

describe("toWebVTT", () => {
  it('starts with "WEBVTT" and has one cue per segment, timed HH:MM:SS.mmm', () => {
    const vtt = toWebVTT({ segments: [{ startMs: 0, endMs: 1500, text: "Hello there." }, { startMs: 1500, endMs: 3_723_004, text: "General Kenobi." }] });
    expect(vtt).toBe("WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello there.\n\n00:00:01.500 --> 01:02:03.004\nGeneral Kenobi.\n");
  });

  it("writes timestamps as HH:MM:SS.mmm, hours included", () => {
    expect([0, 999, 61_001, 3_600_000, 36_000_000 + 59_999].map(vttTimestamp)).toEqual(["00:00:00.000", "00:00:00.999", "00:01:01.001", "01:00:00.000", "10:00:59.999"]);
  });

  it("escapes the characters cue text may not hold", () => {
    const vtt = toWebVTT({ segments: [{ startMs: 0, endMs: 1000, text: "a <b> & c --> d" }] });
    expect(cuesOf(vtt)[0]!.text).toBe("a &lt;b&gt; &amp; c --&gt; d");
  });

  it("keeps a segment's text in its cue across paragraph breaks: a line break is a space, since a blank line ends a cue", () => {
    for (const text of ["Para one.\n\nPara two.", "line one\r\rline two", "one\r\n\r\ntwo \n three"]) {
      const cues = cuesOf(toWebVTT({ segments: [{ startMs: 0, endMs: 1000, text }] }));
      expect(cues).toHaveLength(1);
      expect(cues[0]!.text).toBe(text.replace(/\s*[\r\n]+\s*/g, " "));
    }
  });

  it("names the speaker with a voice span where the segment has one", () => {
    expect(cuesOf(toWebVTT({ segments: [{ startMs: 0, endMs: 1000, text: "Hi.", speaker: "speaker_0" }] }))[0]!.text).toBe("<v speaker_0>Hi.");
  });

  it("a transcript without segments has no cues", () => {
    expect(toWebVTT({})).toBe("WEBVTT\n");
    expect(toWebVTT(undefined)).toBe("WEBVTT\n");
  });

  it("cuts a long segment with words at word boundaries, keeping its text's punctuation, each cue within the limits", () => {
    const text = "Well, this is a rather long sentence, spoken slowly, that no caption line should hold whole; it goes on and on.";
    const segment = timed(text, 10_000, 600);
    const cues = cuesOf(toWebVTT({ segments: [segment] }, { maxCueMs: 4000, maxCueChars: 40 }));
    expect(cues.length).toBeGreaterThan(2);
    expect(cues.map((c) => c.text).join(" ")).toBe(text);
    expect(cues[0]!.start).toBe("00:00:10.000");
    expect(cues.at(-1)!.end).toBe(vttTimestamp(segment.endMs));
    for (const cue of cues) {
      expect(cue.text.length).toBeLessThanOrEqual(40);
      expect(Date.parse(`1970-01-01T${cue.end}Z`) - Date.parse(`1970-01-01T${cue.start}Z`)).toBeLessThanOrEqual(4000);
      expect(text.split(" ")).toContain(cue.text.split(" ")[0]);
    }
    for (let i = 1; i < cues.length; i++) expect(cues[i]!.start).toBe(cues[i - 1]!.end);
  });

  it("keeps the words a long segment opens with that have no times (text, not words) in its first cue", () => {
    const segment = timed("so this is a fairly long sentence that keeps going on and on without any stop at all", 500, 400);
    const cues = cuesOf(toWebVTT({ segments: [{ ...segment, text: `Um, ${segment.text}` }] }, { maxCueMs: 3000 }));
    expect(cues.length).toBeGreaterThan(1);
    expect(cues[0]!.text.startsWith("Um, so this")).toBe(true);
    expect(cues.map((c) => c.text).join(" ")).toBe(`Um, ${segment.text}`);
  });

  it("finds each timed word where a word begins, so an untimed word holding the next one's text does not cut a cue inside it", () => {
    // "another" has no times; cues of two timed words each, so the second cue begins at "other".
    const text = "one two another other three four five six";
    const words = text.split(" ").filter((word) => word !== "another").map((word, i) => ({ text: word, startMs: i * 1000, endMs: i * 1000 + 900 }));
    const cues = cuesOf(toWebVTT({ segments: [{ text, startMs: 0, endMs: words.at(-1)!.endMs, words }] }, { maxCueMs: 2000 }));
    expect(cues.map((c) => c.text)).toEqual(["one two another", "other three", "four five", "six"]);
  });

  it("keeps the punctuation around words that follow a dash, a quote or a bracket when it cuts", () => {
    const text = 'He paused—then said: "then we went (home)."';
    const words = ["He", "paused", "then", "said:", "then", "we", "went", "home)."].map((word, i) => ({ text: word, startMs: i * 400, endMs: i * 400 + 350 }));
    const cues = cuesOf(toWebVTT({ segments: [{ text, startMs: 0, endMs: words.at(-1)!.endMs, words }] }, { maxCueMs: 900 }));
    expect(cues.length).toBeGreaterThan(1);
    expect(cues.map((c) => c.text)).toEqual(["He paused—", "then said:", '"then we', 'went (home)."']);
  });

  it("leaves a short segment whole, and a long one without word timings whole", () => {
    expect(cuesOf(toWebVTT({ segments: [timed("short and sweet", 0, 300)] }))).toHaveLength(1);
    expect(cuesOf(toWebVTT({ segments: [{ startMs: 0, endMs: 60_000, text: "long ".repeat(50).trim() }] }))).toHaveLength(1);
  });

  it("orders cues by start time, stably, so no cue starts before the one before it", () => {
    const vtt = toWebVTT({
      segments: [
        { startMs: 5000, endMs: 6000, text: "third" },
        { startMs: 1000, endMs: 2000, text: "first" },
        { startMs: 1000, endMs: 1500, text: "second" },
        { startMs: 0, endMs: 9000, text: "long one, cut", words: [{ text: "long", startMs: 0, endMs: 300 }, { text: "one,", startMs: 300, endMs: 600 }, { text: "cut", startMs: 8000, endMs: 9000 }] },
      ],
    });
    expect(cuesOf(vtt).map((c) => [c.start, c.text])).toEqual([
      ["00:00:00.000", "long one,"],
      ["00:00:01.000", "first"],
      ["00:00:01.000", "second"],
      ["00:00:05.000", "third"],
      ["00:00:08.000", "cut"],
    ]);
  });

  it("clamps a start before 0 to 0 before making the cue last at least 1 ms", () => {
    const vtt = toWebVTT({ segments: [{ startMs: -500, endMs: -200, text: "early" }, { startMs: -100, endMs: 400, text: "late" }] });
    expect(vtt).toBe("WEBVTT\n\n00:00:00.000 --> 00:00:00.001\nearly\n\n00:00:00.000 --> 00:00:00.400\nlate\n");
  });

  describe("on the service's own transcripts", () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startClientService();
    });
    afterAll(() => svc?.close());

    it("makes captions of a post's embed.transcript", async () => {
      const alice = createClient({ baseUrl: svc.baseUrl, token: svc.tenants.alpha.token }).as(freshActor());
      const audio = await alice.uploadAudio(noiseWav(2000), { mimeType: "audio/wav" });
      const { postId } = await alice.createPost({ text: "captions", embed: { $type: "dev.svc.embed.audio", audio }, processing: { transcribe: true } });
      const { embed } = await alice.getPost(postId);
      const vtt = toWebVTT(embed!.transcript);
      expect(vtt.startsWith("WEBVTT\n\n")).toBe(true);
      const cues = cuesOf(vtt);
      expect(cues).toHaveLength(embed!.transcript!.segments!.length);
      expect(cues.map((c) => c.text).join(" ")).toContain(embed!.transcript!.segments![0]!.text.trim());
    });
  });
});
