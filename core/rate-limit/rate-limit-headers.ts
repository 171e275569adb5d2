import type { RateLimitResult } from "./take-rate-limits";

// Header values follow draft-ietf-httpapi-ratelimit-headers (structured-field lists):
//   RateLimit-Policy: "actor";q=10;w=900, "aggregate-ip";q=120;w=900
//   RateLimit: "actor";r=3;t=412

const sfString = (s: string) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
export const seconds = (ms: number) => Math.ceil(ms / 1000);

/** The denied limiter that frees up last, else the one with the least quota left (ties: the longer wait). */
export const mostRestrictive = (results: readonly RateLimitResult[]): RateLimitResult | undefined => {
  const denied = results.filter((r) => !r.allowed);
  if (denied.length > 0) return denied.reduce((a, b) => (b.resetMs > a.resetMs ? b : a));
  return results.reduce<RateLimitResult | undefined>(
    (a, b) => (!a || b.remaining < a.remaining || (b.remaining === a.remaining && b.resetMs > a.resetMs) ? b : a),
    undefined,
  );
};

/** Whole seconds (at least 1) until every limiter that denied the request has room again; undefined when none denied. */
export const retryAfterSeconds = (results: readonly RateLimitResult[]): number | undefined => {
  const denied = results.filter((r) => !r.allowed);
  if (denied.length === 0) return undefined;
  return Math.max(1, ...denied.map((r) => seconds(r.resetMs)));
};

/** `RateLimit-Policy` and `RateLimit` for any response, plus `Retry-After` when the request was denied. */
export const rateLimitHeaders = (results: readonly RateLimitResult[]): Record<string, string> => {
  const current = mostRestrictive(results);
  if (!current) return {};
  const headers: Record<string, string> = {
    "RateLimit-Policy": results
      .map((r) => `${sfString(r.name)};q=${r.limit};w=${Math.max(1, seconds(r.windowMs))}`)
      .join(", "),
  };
  const retryAfter = retryAfterSeconds(results);
  // A 429's effective window must not end before its Retry-After (draft section 6), so they are the same number.
  const t = retryAfter ?? seconds(current.resetMs);
  headers.RateLimit = `${sfString(current.name)};r=${current.remaining};t=${t}`;
  if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
  return headers;
};
