import { describe, expect, it } from "vitest";
import { retryAfterMs } from "./retry-after";

describe("a provider's Retry-After", () => {
  const now = Date.parse("2026-11-28T12:00:00Z");

  it("is read as delay-seconds or an HTTP-date, in milliseconds from now", () => {
    expect(retryAfterMs("40", now)).toBe(40_000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs("Sat, 28 Nov 2026 12:01:30 GMT", now)).toBe(90_000);
  });

  it("is no hint when absent, malformed, negative, fractional or already past", () => {
    for (const value of [null, undefined, "", "soon", "-5", "1.5", "1e3", "2026-11-28T12:05:00Z", "Sat, 28 Nov 2026 11:59:00 GMT"]) {
      expect(retryAfterMs(value, now), String(value)).toBeUndefined();
    }
  });
});
