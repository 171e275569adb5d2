/** RFC 9110 single byte ranges. */

export type RangeRequest =
  /** No usable Range header: answer 200 with the whole body. */
  | { kind: "whole" }
  /** Answer 206 with bytes start..end inclusive. */
  | { kind: "partial"; start: number; end: number }
  /** Answer 416 with `Content-Range: bytes *\/<size>`. */
  | { kind: "unsatisfiable" };

const whole = { kind: "whole" } as const;
const unsatisfiable = { kind: "unsatisfiable" } as const;

/**
 * A malformed header, a unit other than bytes, or several ranges (`bytes=0-1,5-6`) yield the whole body: the
 * RFC lets a server ignore Range, and one stream per request keeps multipart/byteranges out of the service.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return whole;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return whole;
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return whole;

  if (first === "") {
    // Suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return unsatisfiable;
    return { kind: "partial", start: Math.max(0, size - length), end: size - 1 };
  }

  const start = Number(first);
  const end = last === "" ? size - 1 : Number(last);
  if (last !== "" && end < start) return whole; // invalid range-spec: ignored, as the RFC says
  if (start >= size) return unsatisfiable;
  return { kind: "partial", start, end: Math.min(end, size - 1) };
}
