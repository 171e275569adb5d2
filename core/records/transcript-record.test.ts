import { describe, expect, it } from "vitest";
import { stubTranscriber } from "../providers/stub-providers";
import { assertValidRecord } from "./lexicons";
import { nsids } from "./nsids";
import { recordCid } from "./record-cid";
import { buildTranscriptRecord } from "./transcript-record";

const subject = { uri: "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/dev.svc.audio.post/3lbqcfqdbxk2a", cid: "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm" } as const;
const now = new Date("2026-01-01T00:00:00Z");

describe("the transcript record", () => {
  it("carries the transcript's lang, and each segment's speaker, words and events, and validates against its lexicon", async () => {
    const transcript = await stubTranscriber().transcribe({ appId: "a", cid: "bafkreiabcdefgh", mimeType: "audio/wav", size: 1, durationMs: 10_000 }, { signal: new AbortController().signal, deadline: Infinity });
    const record = buildTranscriptRecord(subject, transcript, now);
    expect(record).toMatchObject({ $type: nsids.transcript, subject, text: transcript.text, lang: "en", segments: transcript.segments });
    expect(record.segments![0]).toMatchObject({ speaker: "speaker_0", words: [{ text: "Stub", startMs: 0 }, {}, {}, {}] });
    expect(() => assertValidRecord(nsids.transcript, record)).not.toThrow();
    expect(recordCid(record)).toMatch(/^bafyrei/);
  });

  it("rounds every time to whole milliseconds, words' and events' too", () => {
    const record = buildTranscriptRecord(
      subject,
      { text: "hi", segments: [{ startMs: 0.4, endMs: 99.6, text: "hi", words: [{ text: "hi", startMs: 0.4, endMs: 99.6, confidence: 900 }], events: [{ text: "(music)", startMs: 99.5, endMs: 120.2 }] }] },
      now,
    );
    expect(record.segments).toEqual([{ startMs: 0, endMs: 100, text: "hi", words: [{ text: "hi", startMs: 0, endMs: 100, confidence: 900 }], events: [{ text: "(music)", startMs: 100, endMs: 120 }] }]);
    expect(() => assertValidRecord(nsids.transcript, record)).not.toThrow();
  });
});
