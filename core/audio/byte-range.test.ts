import { describe, expect, it } from "vitest";
import { parseRange } from "./byte-range";

describe("single byte ranges", () => {
  const size = 1000;
  it("answers a first byte, a middle, a suffix and an open-ended range", () => {
    expect(parseRange("bytes=0-0", size)).toEqual({ kind: "partial", start: 0, end: 0 });
    expect(parseRange("bytes=100-199", size)).toEqual({ kind: "partial", start: 100, end: 199 });
    expect(parseRange("bytes=-500", size)).toEqual({ kind: "partial", start: 500, end: 999 });
    expect(parseRange("bytes=100-", size)).toEqual({ kind: "partial", start: 100, end: 999 });
  });

  it("clamps an end past the last byte and a suffix longer than the file", () => {
    expect(parseRange("bytes=900-5000", size)).toEqual({ kind: "partial", start: 900, end: 999 });
    expect(parseRange("bytes=-5000", size)).toEqual({ kind: "partial", start: 0, end: 999 });
  });

  it("a start past the end, or an empty suffix, is unsatisfiable (416)", () => {
    expect(parseRange("bytes=1000-", size)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=5000-6000", size)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=-0", size)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=0-0", 0)).toEqual({ kind: "unsatisfiable" });
  });

  it("multi-range, malformed or non-byte ranges are ignored: the whole body (200)", () => {
    for (const header of [undefined, "bytes=0-1,5-6", "bytes=abc", "items=0-1", "bytes=-", "bytes=5-1", "bytes 0-1"]) {
      expect(parseRange(header, size), String(header)).toEqual({ kind: "whole" });
    }
  });
});
