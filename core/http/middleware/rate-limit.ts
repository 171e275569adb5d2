import type { MiddlewareObj } from "@middy/core";
import { rateLimitAddress } from "../../rate-limit/client-ip";
import { policyOf } from "../../rate-limit/policies";
import { rateLimitHeaders } from "../../rate-limit/rate-limit-headers";
import { refusalMessage } from "../../rate-limit/refusal-message";
import { takeRateLimits, type RateLimitOutcome, type RateLimitRequest } from "../../rate-limit/take-rate-limits";
import { takeWithFirstQuery } from "../../rate-limit/take-with-first-query";
import { DomainError } from "../../domain-error";
import type { RouteCall } from "../route-call";
import { windowClock } from "../../system-clock";

/**
 * The limiters of class `cls` (the route's own unless said) for this call: its own (keyed on the actor, the tenant
 * or the client IP) and the aggregate IP one. A request refused before it was known who calls (no valid token, no
 * acting actor on a write) has only the aggregate one.
 */
const limitersOf = (call: RouteCall, cls = call.route.rateLimit): RateLimitRequest[] => {
  if (!cls) return [];
  const policies = call.deps.config.rateLimits;
  const address = rateLimitAddress(call.clientIp);
  const caller = call.tenant
    ? call.actor
      ? (["actor", `${call.tenant.appId}:${call.actor}`] as const)
      : cls === "read"
        ? (["tenant", call.tenant.appId] as const)
        : undefined
    : call.route.auth === "anonymous"
      ? (["ip", address] as const)
      : undefined;
  const aggregate = policyOf(policies, cls, "aggregate-ip");
  const own = caller && policyOf(policies, cls, caller[0]);
  return [
    ...(caller && own ? [{ name: caller[0], key: `${cls}:${caller[0]}:${caller[1]}`, limit: own.limit, windowMs: own.windowMs }] : []),
    { name: "aggregate-ip", key: `${cls}:aggregate-ip:${address}`, limit: aggregate.limit, windowMs: aggregate.windowMs },
  ];
};

/** A take's outcome on the call: its RateLimit headers (Retry-After on a denial), and a 429 thrown when denied. */
const admit = (call: RouteCall, { allowed, results }: RateLimitOutcome, cls = call.route.rateLimit!) => {
  Object.assign(call.responseHeaders, rateLimitHeaders(results));
  if (!allowed) throw new DomainError("RATE_LIMITED", refusalMessage(cls, results));
};

/** Calls the idempotency check answered, limited as reads (admitAsRead): their error is not counted again. */
const admittedAsRead = new WeakSet<RouteCall>();

/**
 * Admits a write the idempotency check answers before the route's limiter, a replay or a 409 while its key's first
 * request runs: it writes nothing, so it takes the read class's limiters (the actor's and the client IP's aggregate),
 * not a write, and a storm of them is refused like a read storm. Counted as writes, a client's own concurrent retries
 * spent the write budget of the request they retried, which was then refused, and no post was made.
 */
export const admitAsRead = async (call: RouteCall): Promise<void> => {
  admittedAsRead.add(call);
  admit(call, await takeRateLimits(call.sql, limitersOf(call, "read"), windowClock(call.deps.now)), "read");
};

/**
 * Takes the route's limiters in one statement: the per-caller limit (acting actor; the tenant for viewer-less
 * reads; the client IP for anonymous routes) and the aggregate limit on the client IP. Each policy is named in the
 * RateLimit headers for what it keys on: `actor`, `tenant` or `ip`, and `aggregate-ip` for the aggregate. Each
 * limit is the deployment's (`config.rateLimits`: the interface's unless the operator set it; see
 * docs/decisions.md#rate-limits). A refusal's message names the limit hit as the headers do.
 *
 * Reads take them in the statement of their first read, where the store calls `firstRead` (core/sql/first-read.ts):
 * one round trip where there were two. A read that fails or answers without one takes them before its answer goes
 * out, and a refusal still wins over its answer.
 */
export const rateLimit = (): MiddlewareObj<RouteCall> => {
  const pending = new WeakMap<RouteCall, () => Promise<void>>();
  const taking = new WeakSet<RouteCall>();
  return {
    before: async ({ event: call }) => {
      const cls = call.route.rateLimit;
      if (!cls) return;
      taking.add(call);
      const hits = limitersOf(call);
      if (cls !== "read") {
        admit(call, await takeRateLimits(call.sql, hits, windowClock(call.deps.now)));
        return;
      }
      const deferred = takeWithFirstQuery(call.sql, hits, windowClock(call.deps.now), (outcome) => admit(call, outcome));
      call.sql = deferred.sql;
      pending.set(call, deferred.take);
    },
    after: async ({ event: call }) => {
      await pending.get(call)?.();
    },
    onError: async (request) => {
      const call = request.event;
      const take = pending.get(call);
      if (take) await take().catch((error: unknown) => void (request.error = error as Error));
      const cls = call.route.rateLimit;
      // Taken already: by the route's limiter, or as a read by the idempotency check; a limiter's refusal where it refused.
      if (!cls || taking.has(call) || admittedAsRead.has(call) || (request.error instanceof DomainError && request.error.code === "RATE_LIMITED")) return;
      // Refused before its limits were taken (no valid token, bad input, a key in use): every route is limited, so
      // it still counts, and past the limit the 429 wins. A take that fails leaves the refusal as it is.
      const outcome = await takeRateLimits(call.sql, limitersOf(call), windowClock(call.deps.now)).catch(() => undefined);
      if (!outcome) return;
      try {
        admit(call, outcome);
      } catch (refusal) {
        request.error = refusal as Error;
      }
    },
  };
};
