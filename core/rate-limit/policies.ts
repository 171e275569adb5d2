export type RateLimitClass = "write" | "read" | "upload";

/**
 * What a limiter counts per, and its name in the RateLimit headers: the acting actor, the tenant (viewer-less
 * reads), the client IP (anonymous playback), or every caller from one client IP together (the aggregate).
 */
export type RateLimitKey = "actor" | "tenant" | "ip" | "aggregate-ip";

const second = 1000;
const units = { h: 3600 * second, m: 60 * second, s: second } as const;

/**
 * A limit of `limit` requests in any `windowMs` (a sliding window). Written `<count>/<window>` (`60/1m`, `10/15m`,
 * `20/1h`, `600/90s`), which `String()` gives back, so the variable table shows a default as it is set.
 */
export class RateLimitPolicy {
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  toString(): string {
    const [unit, ms] = Object.entries(units).find(([, ms]) => this.windowMs % ms === 0) ?? ["ms", 1];
    return `${this.limit}/${this.windowMs / ms}${unit}`;
  }
}

/**
 * The sliding log keeps one timestamp per request counted and rewrites it on each take, so a limit's cost grows
 * with its count; the window fits the log's integer milliseconds with room to spare.
 */
export const maxRateLimitCount = 10_000;
export const maxRateLimitWindowMs = 24 * units.h;

/** `<count>/<window>` as a policy, or why it is not one. */
export const parseRateLimitPolicy = (text: string): RateLimitPolicy | { error: string } => {
  const match = /^([1-9]\d{0,5})\/([1-9]\d{0,5})([smh])$/.exec(text);
  if (!match) return { error: "must be <count>/<window>, a whole count and a whole number of s, m or h (e.g. 60/1m)" };
  const limit = Number(match[1]);
  const windowMs = Number(match[2]) * units[match[3] as keyof typeof units];
  if (limit > maxRateLimitCount) return { error: `count must be at most ${maxRateLimitCount}` };
  if (windowMs > maxRateLimitWindowMs) return { error: "window must be at most 24h" };
  return new RateLimitPolicy(limit, windowMs);
};

/** Every limit of one deployment: per class, per what it keys on. Writes and uploads always have an actor. */
export interface RateLimitPolicies {
  write: { actor: RateLimitPolicy; "aggregate-ip": RateLimitPolicy };
  read: { actor: RateLimitPolicy; tenant: RateLimitPolicy; ip: RateLimitPolicy; "aggregate-ip": RateLimitPolicy };
  upload: { actor: RateLimitPolicy; "aggregate-ip": RateLimitPolicy };
}

/**
 * The interface's limits (docs/decisions.md#rate-limits), each the default of its variable (core/config/variables.ts),
 * which an operator may set otherwise.
 */
export const rateLimitPolicies: Readonly<RateLimitPolicies> = {
  write: { actor: new RateLimitPolicy(10, 15 * units.m), "aggregate-ip": new RateLimitPolicy(120, 15 * units.m) },
  read: {
    actor: new RateLimitPolicy(60, units.m),
    tenant: new RateLimitPolicy(60, units.m),
    ip: new RateLimitPolicy(60, units.m),
    "aggregate-ip": new RateLimitPolicy(600, units.m),
  },
  upload: { actor: new RateLimitPolicy(20, units.h), "aggregate-ip": new RateLimitPolicy(120, 15 * units.m) },
};

/** The policy of a class's limiter keyed on `key`; a key a class never meets (writes are never viewer-less) is its actor's. */
export const policyOf = (policies: RateLimitPolicies, cls: RateLimitClass, key: RateLimitKey): RateLimitPolicy =>
  (policies[cls] as Partial<Record<RateLimitKey, RateLimitPolicy>>)[key] ?? policies[cls].actor;
