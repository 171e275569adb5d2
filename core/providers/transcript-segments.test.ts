import { describe, expect, it } from "vitest";
import { segmentTokens, type TimedToken } from "./transcript-segments";

const word = (text: string, start: number, end: number, before = " "): TimedToken => ({ before, text, startMs: start * 1000, endMs: end * 1000 });

describe("transcript segments", () => {
  it("cut at sentence ends, punctuation staying with its word", () => {
    const segments = segmentTokens([word("Hello", 0, 0.4), { before: "", text: "." }, word("How", 1, 1.2), word("are", 1.2, 1.4), word("you", 1.4, 1.6), { before: "", text: "?" }]);
    expect(segments).toEqual([
      { startMs: 0, endMs: 400, text: "Hello." },
      { startMs: 1000, endMs: 1600, text: "How are you?" },
    ]);
  });

  it("cut about every 12 seconds when nobody ends a sentence", () => {
    const tokens = Array.from({ length: 60 }, (_, i) => word(`w${i}`, i * 0.5, i * 0.5 + 0.4));
    const segments = segmentTokens(tokens);
    expect(segments.length).toBe(3);
    for (const s of segments) expect(s.endMs - s.startMs).toBeLessThanOrEqual(12_500);
    expect(segments.map((s) => s.text).join(" ")).toBe(tokens.map((t) => t.text).join(" "));
  });
});
