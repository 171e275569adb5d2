import { describe, expect, it } from "vitest";
import { parseRateLimitPolicy, rateLimitPolicies, RateLimitPolicy } from "./policies";

const shown = (policies: object): unknown => JSON.parse(JSON.stringify(policies, (_, v) => (v instanceof RateLimitPolicy ? String(v) : v)));

describe("rate limit policies", () => {
  it("the defaults are the interface's limits: writes, reads and uploads per actor and per IP, viewer-less reads per tenant, playback per IP", () => {
    expect(shown(rateLimitPolicies)).toEqual({
      write: { actor: "10/15m", "aggregate-ip": "120/15m" },
      read: { actor: "60/1m", tenant: "60/1m", ip: "60/1m", "aggregate-ip": "600/1m" },
      upload: { actor: "20/1h", "aggregate-ip": "120/15m" },
    });
    expect(rateLimitPolicies.write.actor).toEqual({ limit: 10, windowMs: 900_000 });
    expect(rateLimitPolicies.upload.actor).toEqual({ limit: 20, windowMs: 3_600_000 });
  });

  it.each([
    ["60/1m", 60, 60_000, "60/1m"],
    ["10/15m", 10, 900_000, "10/15m"],
    ["20/1h", 20, 3_600_000, "20/1h"],
    ["600/90s", 600, 90_000, "90s"],
    ["1/60s", 1, 60_000, "1/1m"],
    ["10000/24h", 10_000, 86_400_000, "10000/24h"],
  ])("a limit is written <count>/<window>: %s is %i per %i ms", (text, limit, windowMs, back) => {
    const policy = parseRateLimitPolicy(text);
    expect(policy).toEqual({ limit, windowMs });
    expect(String(policy)).toContain(back);
  });

  it.each(["60", "60/", "/1m", "60/1", "60/1d", "60/1ms", "60/1M", "60/0s", "0/1m", "-1/1m", "1.5/1m", "60/1.5m", "60 / 1m", "60/1m30s", "060/1m", "60/01m", "1e3/1m", "10001/1m", "1/25h", "1/1441m"])(
    "a malformed limit (%s) is refused, saying why",
    (text) => {
      const parsed = parseRateLimitPolicy(text);
      expect(parsed).not.toBeInstanceOf(RateLimitPolicy);
      expect((parsed as { error: string }).error).toMatch(/must be|at most/);
    },
  );
});
