import type { MiddlewareObj } from "@middy/core";
import { DomainError } from "../../domain-error";
import {
  claimIdempotencyKey,
  completeIdempotencyClause,
  completeIdempotencyKey,
  heldIdempotencyClause,
  releaseIdempotencyKey,
  type HeldKey,
  type IdempotencyClaim,
  writtenIdempotencyClause,
} from "../../idempotency/claim";
import { fingerprint, parseIdempotencyKey } from "../../idempotency/idempotency-key";
import { successBody, type Outcome } from "../outcome";
import type { RouteCall } from "../route-call";
import { admitAsRead } from "./rate-limit";
import { refreshPlaybackUrls } from "../../audio/refresh-playback-urls";

/** The middleware's own record of a held key: whether the handler's write took the completion clause. */
interface Held {
  key: HeldKey;
  completedInWrite: boolean;
}

/** The stored answer, its playback URL signed again (refresh-playback-urls.ts). */
const replayed = (body: unknown, call: RouteCall): unknown => {
  const { publicBaseUrl, playbackSigningKey } = call.deps.config;
  const appId = call.tenant?.appId;
  return publicBaseUrl && playbackSigningKey && appId
    ? refreshPlaybackUrls(body, { baseUrl: publicBaseUrl, secret: playbackSigningKey, now: call.deps.now(), appId })
    : body;
};

/**
 * The route a key is scoped to: the route and its path parameters, so a PATCH's key belongs to that one post (the
 * same key on another post is a request of its own, never the first post's answer).
 */
const routeScope = (call: RouteCall): string =>
  [call.route.file, ...Object.values((call.params ?? {}) as Record<string, string>)].join("/");

/**
 * `Idempotency-Key` on a write: the first request claims the key, a retry with the same body replays the stored
 * answer, a retry while the first runs is a 409, the same key with another body a 422, and any failure releases
 * the key at once so the client can fix and retry. The handler gets an `IdempotencyClaim` to complete the key inside
 * its own write; the status and envelope stored with the answer are this middleware's business.
 */
export const idempotency = (): MiddlewareObj<RouteCall, Outcome> => {
  const held = new WeakMap<RouteCall, Held>();
  return {
    before: async (request) => {
      const call = request.event;
      const header = call.req.headers["idempotency-key"];
      if (!call.route.idempotent || header === undefined || !call.tenant || !call.actor) return;
      const scope = { appId: call.tenant.appId, actor: call.actor, route: routeScope(call), key: parseIdempotencyKey(header) };
      const outcome = await claimIdempotencyKey(call.sql, scope, fingerprint(call.body), call.deps.now());
      switch (outcome.kind) {
        case "claimed": {
          const state: Held = { key: outcome.held, completedInWrite: false };
          held.set(call, state);
          const status = call.route.status;
          const claim: IdempotencyClaim = {
            completeClause: (p, answer) => {
              state.completedInWrite = true;
              return completeIdempotencyClause(p, outcome.held, status, successBody(answer), call.deps.now());
            },
            heldClause: (p) => heldIdempotencyClause(p, outcome.held),
            writtenClause: (p) => writtenIdempotencyClause(p, outcome.held, status),
            written: outcome.written,
          };
          call.idempotency = claim;
          call.releaseIdempotencyKey = () => releaseIdempotencyKey(call.sql, outcome.held);
          return;
        }
        case "replay":
          // Refused (429), a replay leaves the stored answer as it is: this request never held the key.
          await admitAsRead(call);
          call.responseHeaders["Idempotent-Replayed"] = "true";
          return { kind: "json", status: outcome.status, body: replayed(outcome.body, call), headers: {} } satisfies Outcome;
        case "in-progress":
          await admitAsRead(call);
          throw new DomainError("IDEMPOTENCY_IN_PROGRESS", "a request with this Idempotency-Key is still in progress");
        case "mismatch":
          throw new DomainError("IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used with a different request body");
      }
    },
    after: async ({ event: call, response }) => {
      const state = held.get(call);
      if (!state || state.completedInWrite || response?.kind !== "json") return;
      await completeIdempotencyKey(call.sql, state.key, response.status, response.body, call.deps.now());
    },
    onError: async ({ event: call }) => {
      const state = held.get(call);
      // A write that took the clause and then failed rolled it back with itself: the key is still running.
      if (state) await releaseIdempotencyKey(call.sql, state.key);
    },
  };
};
