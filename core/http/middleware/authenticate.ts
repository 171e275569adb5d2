import type { MiddlewareObj } from "@middy/core";
import { readActingActor } from "../../tenancy/acting-actor";
import { bearerToken, createTokenIndex, secretMatches } from "../../tenancy/service-token";
import { DomainError } from "../../domain-error";
import { authPolicies } from "../route";
import type { RouteCall } from "../route-call";

/** Resolves the caller from the route's auth policy: tenant by service token, the acting actor, or the system token. */
export const authenticate = (): MiddlewareObj<RouteCall> => {
  let index: ReturnType<typeof createTokenIndex> | undefined;
  return {
    before: ({ event: call }) => {
      const policy = authPolicies[call.route.auth];
      if (policy.credential === "none") return;
      const token = bearerToken(call.req.headers.authorization);
      if (policy.credential === "system-token") {
        const expected = call.deps.config.systemAuthToken;
        if (!expected) throw new DomainError("SERVICE_UNAVAILABLE", "system routes are disabled: SYSTEM_AUTH_TOKEN is unset");
        if (!token || !secretMatches(token, expected)) throw new DomainError("UNAUTHORIZED", "a valid system token is required");
        return;
      }
      index ??= createTokenIndex(call.deps.config.tenants.values());
      const tenant = token ? index(token) : undefined;
      if (!tenant) throw new DomainError("UNAUTHORIZED", "a valid service token is required");
      call.tenant = tenant;
      const { actor, actorDid } = readActingActor(call.req.headers);
      if (policy.actor === "required" && !actor) throw new DomainError("ACTING_ACTOR_REQUIRED", "X-Svc-Acting-Actor is required");
      call.actor = actor;
      call.actorDid = actorDid;
    },
  };
};
