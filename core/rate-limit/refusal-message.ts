import type { RateLimitClass, RateLimitKey } from "./policies";
import { mostRestrictive, retryAfterSeconds, seconds } from "./rate-limit-headers";
import type { RateLimitResult } from "./take-rate-limits";

const requests: Record<RateLimitClass, string> = { write: "writes", read: "reads", upload: "uploads" };
const per: Record<RateLimitKey, string> = {
  actor: "acting actor",
  tenant: "tenant",
  ip: "client IP",
  "aggregate-ip": "client IP, every caller together",
};

/**
 * A 429's message: the limit that was hit, by class, key and window, and named as the RateLimit header names it
 * (the same limiter, quota and window in seconds), so a caller can tell which limit to wait out or ask to raise.
 */
export const refusalMessage = (cls: RateLimitClass, results: readonly RateLimitResult[]): string => {
  const hit = mostRestrictive(results.filter((r) => !r.allowed));
  if (!hit) return "rate limit exceeded";
  const who = per[hit.name as RateLimitKey] ?? hit.name;
  return (
    `rate limit exceeded: ${hit.limit} ${requests[cls]} per ${seconds(hit.windowMs)} s per ${who} ` +
    `(RateLimit-Policy "${hit.name}"); retry after ${retryAfterSeconds(results)} s`
  );
};
