import { describe, expect, it } from "vitest";
import { rateLimitHeaders, retryAfterSeconds } from "./rate-limit-headers";
import type { RateLimitResult } from "./take-rate-limits";

const result = (over: Partial<RateLimitResult> & Pick<RateLimitResult, "name">): RateLimitResult => ({
  key: `k:${over.name}`,
  limit: 10,
  windowMs: 900_000,
  remaining: 5,
  resetMs: 60_000,
  allowed: true,
  ...over,
});

describe("RateLimit headers (draft-ietf-httpapi-ratelimit-headers)", () => {
  it("RateLimit-Policy lists every limiter as a structured-field item with quota and window in seconds", () => {
    const headers = rateLimitHeaders([
      result({ name: "actor", limit: 10, windowMs: 900_000 }),
      result({ name: "ip", limit: 120, windowMs: 900_000 }),
    ]);
    expect(headers["RateLimit-Policy"]).toBe('"actor";q=10;w=900, "ip";q=120;w=900');
  });

  it("RateLimit reports the limiter with the least quota left, with seconds until a slot comes back", () => {
    const headers = rateLimitHeaders([
      result({ name: "actor", remaining: 3, resetMs: 41_200 }),
      result({ name: "ip", limit: 120, remaining: 90, resetMs: 10_000 }),
    ]);
    expect(headers.RateLimit).toBe('"actor";r=3;t=42');
  });

  it("a successful response carries no Retry-After", () => {
    const headers = rateLimitHeaders([result({ name: "actor" }), result({ name: "ip" })]);
    expect(headers["Retry-After"]).toBeUndefined();
    expect(headers.RateLimit).toBeDefined();
  });

  it("a denied request carries Retry-After in whole seconds and RateLimit for the denying limiter with r=0", () => {
    const results = [
      result({ name: "actor", remaining: 0, resetMs: 12_345, allowed: false }),
      result({ name: "ip", remaining: 0, resetMs: 1_000, allowed: true }),
    ];
    const headers = rateLimitHeaders(results);
    expect(headers["Retry-After"]).toBe("13");
    expect(headers.RateLimit).toBe('"actor";r=0;t=13');
    expect(headers["RateLimit-Policy"]).toContain('"actor";q=10');
  });

  it("Retry-After waits for the last of several denying limiters and is at least one second", () => {
    expect(
      retryAfterSeconds([
        result({ name: "actor", remaining: 0, resetMs: 2_000, allowed: false }),
        result({ name: "ip", remaining: 0, resetMs: 30_500, allowed: false }),
      ]),
    ).toBe(31);
    expect(retryAfterSeconds([result({ name: "actor", remaining: 0, resetMs: 3, allowed: false })])).toBe(1);
    expect(retryAfterSeconds([result({ name: "actor" })])).toBeUndefined();
  });

  it("policy names are serialised as structured-field strings", () => {
    const headers = rateLimitHeaders([result({ name: 'we"ird\\' })]);
    expect(headers["RateLimit-Policy"]).toBe('"we\\"ird\\\\";q=10;w=900');
  });
});
