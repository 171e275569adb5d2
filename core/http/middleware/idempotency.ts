import type { MiddlewareObj } from "@middy/core";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from "../../idempotency/claim";
import { fingerprint, parseIdempotencyKey } from "../../idempotency/idempotency-key";
import { AppError } from "../errors";
import type { RouteCall } from "../route-call";
import type { Outcome } from "../outcome";

/**
 * `Idempotency-Key` on a write: the first request claims the key, a retry with the same body replays the stored
 * answer, a retry while the first runs is a 409, the same key with another body a 422, and any failure releases
 * the key at once so the client can fix and retry.
 */
export const idempotency = (): MiddlewareObj<RouteCall, Outcome> => ({
  before: async (request) => {
    const call = request.event;
    const header = call.req.headers["idempotency-key"];
    if (!call.route.idempotent || header === undefined || !call.tenant || !call.actor) return;
    const scope = { appId: call.tenant.appId, actor: call.actor, route: call.route.file, key: parseIdempotencyKey(header) };
    const outcome = await claimIdempotencyKey(call.sql, scope, fingerprint(call.body));
    switch (outcome.kind) {
      case "claimed":
        call.idempotency = { scope, completed: false };
        return;
      case "replay":
        call.responseHeaders["Idempotent-Replayed"] = "true";
        return { kind: "json", status: outcome.status, body: outcome.body, headers: {} } satisfies Outcome;
      case "in-progress":
        throw new AppError("IDEMPOTENCY_IN_PROGRESS", "a request with this Idempotency-Key is still in progress");
      case "mismatch":
        throw new AppError("IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used with a different request body");
    }
  },
  after: async ({ event: call, response }) => {
    const claim = call.idempotency;
    if (!claim || claim.completed) return;
    if (response?.kind !== "json") return;
    await completeIdempotencyKey(call.sql, claim.scope, response.status, response.body);
    claim.completed = true;
  },
  onError: async ({ event: call }) => {
    if (call.idempotency && !call.idempotency.completed) await releaseIdempotencyKey(call.sql, call.idempotency.scope);
  },
});
