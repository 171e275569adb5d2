import type { MiddlewareObj } from "@middy/core";
import { rateLimitPolicies } from "../../rate-limit/policies";
import { rateLimitHeaders } from "../../rate-limit/rate-limit-headers";
import { takeRateLimits } from "../../rate-limit/take-rate-limits";
import { DomainError } from "../../domain-error";
import type { RouteCall } from "../route-call";

/**
 * Takes the route's limiters in one statement: the per-caller limit (acting actor; the tenant for viewer-less
 * reads; the client IP for anonymous routes) and the aggregate limit on the client IP. Each policy is named in the
 * RateLimit headers for what it keys on: `actor`, `tenant` or `ip`, and `aggregate-ip` for the aggregate.
 */
export const rateLimit = (): MiddlewareObj<RouteCall> => ({
  before: async ({ event: call }) => {
    const cls = call.route.rateLimit;
    if (!cls) return;
    const policy = rateLimitPolicies[cls];
    const [keyedOn, caller] = call.tenant
      ? call.actor
        ? (["actor", `${call.tenant.appId}:${call.actor}`] as const)
        : (["tenant", call.tenant.appId] as const)
      : (["ip", call.clientIp] as const);
    const { allowed, results } = await takeRateLimits(call.sql, [
      { name: keyedOn, key: `${cls}:${keyedOn}:${caller}`, limit: policy.actor.limit, windowMs: policy.actor.windowMs },
      { name: "aggregate-ip", key: `${cls}:aggregate-ip:${call.clientIp}`, limit: policy.ip.limit, windowMs: policy.ip.windowMs },
    ]);
    // On a denial the headers include Retry-After.
    Object.assign(call.responseHeaders, rateLimitHeaders(results));
    if (!allowed) throw new DomainError("RATE_LIMITED", "rate limit exceeded");
  },
});
