import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProviderError } from "./provider-port";
import { segmentTokens, type TimedToken } from "./transcript-segments";

const word = (text: string, start: number, end: number, speaker?: string): TimedToken => ({
  before: " ",
  text,
  startMs: start * 1000,
  endMs: end * 1000,
  ...(speaker && { speaker }),
});
const punctuation = (text: string): TimedToken => ({ kind: "punctuation", before: "", text });
const failure = (tokens: TimedToken[]) => {
  try {
    segmentTokens(tokens, "test stt");
  } catch (error) {
    return error;
  }
};

describe("transcript segments", () => {
  it("cut at sentence ends, punctuation staying with its word", () => {
    const segments = segmentTokens([word("Hello", 0, 0.4), punctuation("."), word("How", 1, 1.2), word("are", 1.2, 1.4), word("you", 1.4, 1.6), punctuation("?")]);
    expect(segments).toEqual([
      { startMs: 0, endMs: 400, text: "Hello.", words: [{ text: "Hello.", startMs: 0, endMs: 400 }] },
      {
        startMs: 1000,
        endMs: 1600,
        text: "How are you?",
        words: [
          { text: "How", startMs: 1000, endMs: 1200 },
          { text: "are", startMs: 1200, endMs: 1400 },
          { text: "you?", startMs: 1400, endMs: 1600 },
        ],
      },
    ]);
  });

  it("cut about every 12 seconds when nobody ends a sentence", () => {
    const tokens = Array.from({ length: 60 }, (_, i) => word(`w${i}`, i * 0.5, i * 0.5 + 0.4));
    const segments = segmentTokens(tokens);
    expect(segments.length).toBe(3);
    for (const s of segments) expect(s.endMs - s.startMs).toBeLessThanOrEqual(12_500);
    expect(segments.map((s) => s.text).join(" ")).toBe(tokens.map((t) => t.text).join(" "));
  });

  it("cut where the speaker changes, mid-sentence too; labels become speaker_0, speaker_1 in order of first appearance", () => {
    const segments = segmentTokens([word("yes", 0, 0.3, "spk_3"), word("and", 0.4, 0.6, "spk_3"), word("no", 0.7, 0.9, "spk_1"), word("way", 1, 1.2, "spk_1"), word("right", 1.3, 1.5, "spk_3")]);
    expect(segments.map((s) => [s.speaker, s.text, s.startMs, s.endMs])).toEqual([
      ["speaker_0", "yes and", 0, 600],
      ["speaker_1", "no way", 700, 1200],
      ["speaker_0", "right", 1300, 1500],
    ]);
  });

  it("cut where the speaker changes on an untimed word too: the word opens the next speaker's segment", () => {
    const untimed: TimedToken = { before: " ", text: "well", speaker: "spk_0" };
    const segments = segmentTokens([word("Okay", 0, 0.3, "spk_1"), untimed, word("then", 0.5, 0.8, "spk_0")]);
    expect(segments.map((s) => [s.speaker, s.text, s.startMs, s.endMs])).toEqual([
      ["speaker_0", "Okay", 0, 300],
      ["speaker_1", "well then", 500, 800],
    ]);
  });

  it("a word without a speaker label stays with the speaker speaking", () => {
    const segments = segmentTokens([word("one", 0, 0.3, "a"), word("two", 0.4, 0.6), word("three", 0.7, 0.9, "a")]);
    expect(segments).toHaveLength(1);
    expect(segments[0]).toMatchObject({ speaker: "speaker_0", text: "one two three" });
  });

  it("audio events are kept on the segment beside its words, never as words nor in its text", () => {
    const laugh: TimedToken = { kind: "event", before: " ", text: "(laughter)", startMs: 500, endMs: 900 };
    const applause: TimedToken = { kind: "event", before: " ", text: "(applause)", startMs: 3000, endMs: 4000 };
    const segments = segmentTokens([word("Hi.", 0, 0.4), laugh, word("So", 1, 1.2), word("funny", 1.3, 1.5), { ...laugh, startMs: 1400, endMs: 1450 }, word("really.", 1.6, 2), applause]);
    expect(segments.map((s) => [s.text, s.words?.map((w) => w.text), s.events?.map((e) => [e.text, e.startMs])])).toEqual([
      ["Hi.", ["Hi."], undefined],
      [
        "So funny really.",
        ["So", "funny", "really."],
        [
          ["(laughter)", 500],
          ["(laughter)", 1400],
          ["(applause)", 3000],
        ],
      ],
    ]);
  });

  it("punctuation after a sentence end still joins the word before it", () => {
    const segments = segmentTokens([word("What", 0, 0.3), punctuation("?"), punctuation("!"), word("Yes", 1, 1.2)]);
    expect(segments.map((s) => [s.text, s.words?.map((w) => w.text)])).toEqual([
      ["What?!", ["What?!"]],
      ["Yes", ["Yes"]],
    ]);
  });

  it("a word without times is text but not one of the words; confidence becomes thousandths", () => {
    const segments = segmentTokens([{ ...word("sure", 0, 0.4), confidence: 0.8765 }, { before: " ", text: "thing" }, punctuation("."), { ...word("ok", 1, 1.2), confidence: 1.2 }]);
    expect(segments).toEqual([
      { startMs: 0, endMs: 400, text: "sure thing.", words: [{ text: "sure", startMs: 0, endMs: 400, confidence: 877 }] },
      { startMs: 1000, endMs: 1200, text: "ok", words: [{ text: "ok", startMs: 1000, endMs: 1200, confidence: 1000 }] },
    ]);
  });

  it("languages written without spaces keep their text: each word still occurs in its segment's text", () => {
    const tokens: TimedToken[] = ["今日", "は", "いい", "天気", "です", "。"].map((text, i) => ({ before: "", text, startMs: i * 200, endMs: i * 200 + 150 }));
    const [segment] = segmentTokens(tokens);
    expect(segment!.text).toBe("今日はいい天気です。");
    expect(segment!.words!.map((w) => w.text)).toEqual(["今日", "は", "いい", "天気", "です", "。"]);
  });

  it("a timed token is valid only with safe-integer times, startMs >= 0 and endMs >= startMs: any other makes the answer malformed (fail)", () => {
    const bad: [number, number][] = [[5000, 3000], [-1000, 500], [1e20, 1e21], [Infinity, Infinity], [NaN, 1], [0.5, 1], [0, Number.MAX_SAFE_INTEGER + 1]];
    for (const [startMs, endMs] of bad) {
      for (const kind of ["word", "event"] as const) {
        const tokens: TimedToken[] = [word("fine", 0, 0.4), { kind, before: " ", text: "x", startMs, endMs }];
        const error = failure(tokens);
        expect(error, `${kind} ${startMs}..${endMs}`).toBeInstanceOf(ProviderError);
        expect(error).toMatchObject({ disposition: "fail", reason: "provider_error", message: expect.stringMatching(/^test stt: malformed answer/) });
      }
    }
    // A word of no length is valid.
    expect(segmentTokens([word("a", 1, 1)])).toEqual([{ startMs: 1000, endMs: 1000, text: "a", words: [{ text: "a", startMs: 1000, endMs: 1000 }] }]);
  });

  it("a timed word starting before the previous timed word makes the answer malformed (fail); starting together is in order", () => {
    expect(failure([word("a", 5, 6), word("b", 1, 2)])).toMatchObject({ disposition: "fail" });
    // Across a sentence end too: the order is the transcript's, not one segment's.
    expect(failure([word("a.", 5, 6), word("b", 4, 7)])).toMatchObject({ disposition: "fail" });
    expect(segmentTokens([word("a", 1, 2), word("b", 1, 1.5)]).flatMap((s) => s.words!.map((w) => w.startMs))).toEqual([1000, 1000]);
    // Events keep their own times: a sound heard under a word is no word out of order.
    expect(segmentTokens([word("a", 1, 2), { kind: "event", before: " ", text: "(music)", startMs: 0, endMs: 3000 }, word("b", 2, 3)])).toHaveLength(1);
  });

  it("each segment spans its words, and its words occur in its text in order, across every timed word once", () => {
    const token = fc.oneof(
      fc.record({
        kind: fc.constant("word" as const),
        before: fc.constantFrom(" ", ""),
        text: fc.constantFrom("a", "bb", "end.", "why?", "Q", "x'y", "ok!"),
        speaker: fc.option(fc.constantFrom("s1", "s2", "s3"), { nil: undefined }),
        duration: fc.integer({ min: 0, max: 3000 }),
        gap: fc.integer({ min: 0, max: 2000 }),
      }),
      fc.record({ kind: fc.constant("punctuation" as const), before: fc.constant(""), text: fc.constantFrom(",", ".", "?") }),
      fc.record({ kind: fc.constant("event" as const), before: fc.constant(" "), text: fc.constant("(music)"), duration: fc.integer({ min: 0, max: 3000 }), gap: fc.integer({ min: 0, max: 500 }) }),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 80 }), (drawn) => {
        let clock = 0;
        const tokens: TimedToken[] = drawn.map((t) => {
          if (t.kind === "punctuation") return t;
          const startMs = (clock += t.gap);
          const endMs = (clock += t.duration);
          return { ...t, startMs, endMs };
        });
        const segments = segmentTokens(tokens);
        const words = segments.flatMap((s) => s.words ?? []);
        expect(words.length).toBe(tokens.filter((t) => t.kind === "word").length);
        expect(words.map((w) => w.startMs)).toEqual(tokens.filter((t) => t.kind === "word").map((t) => t.startMs));
        // Sounds with no words at all have no segment to go with.
        const events = segments.length > 0 ? tokens.filter((t) => t.kind === "event").length : 0;
        expect(segments.flatMap((s) => s.events ?? []).length).toBe(events);
        for (const segment of segments) {
          const own = segment.words!;
          expect(segment.startMs).toBe(own[0]!.startMs);
          expect(segment.endMs).toBe(Math.max(...own.map((w) => w.endMs)));
          let at = 0;
          for (const w of own) {
            const found = segment.text.indexOf(w.text, at);
            expect(found, `${w.text} in ${segment.text}`).toBeGreaterThanOrEqual(at);
            at = found + w.text.length;
          }
          expect(new Set(own.map((w) => w.text)).has("(music)")).toBe(false);
        }
      }),
    );
  });
});
