export type RateLimitClass = "write" | "read" | "upload";

export interface RateLimitPolicy {
  limit: number;
  windowMs: number;
}

const minute = 60_000;

/**
 * The limits (docs/decisions.md#rate-limits), the one source of truth. `actor` keys on the acting actor, on the tenant
 * for viewer-less reads, or on the client IP for the anonymous audio route; `ip` is the aggregate limit per client
 * IP that runs alongside it. The keys double as the policy names in the RateLimit headers.
 */
export const rateLimitPolicies: Readonly<Record<RateLimitClass, { actor: RateLimitPolicy; ip: RateLimitPolicy }>> = {
  write: { actor: { limit: 10, windowMs: 15 * minute }, ip: { limit: 120, windowMs: 15 * minute } },
  read: { actor: { limit: 60, windowMs: minute }, ip: { limit: 600, windowMs: minute } },
  upload: { actor: { limit: 20, windowMs: 60 * minute }, ip: { limit: 120, windowMs: 15 * minute } },
};
