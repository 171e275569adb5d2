import type { Deps, DepsFor } from "../deps";
import type { IdempotencyClaim } from "../idempotency/claim";
import type { Logger } from "../observability/logger";
import type { Sql } from "../sql/port";
import type { ProvenTenant, Tenant } from "../tenancy/tenant";
import type { AuthPolicy, authPolicies, RouteBody, RouteData, RouteDef, RouteParams, RouteQuery } from "./route";
import type { HttpRequest, HttpResponse } from "../http-message/http-message";

/** Parsed input is typed per route; the middleware chain, which serves every route, sees it as unknown. */
type Specific<R extends RouteDef, T> = RouteDef extends R ? unknown : T;

/**
 * Who is calling, as the route's auth policy proves it before the handler runs (authenticate, then prove custody):
 * `actor` has a proven tenant and an acting actor; `viewer` a proven tenant and perhaps an actor; the others no
 * tenant at all.
 */
export type CallerOf<A extends AuthPolicy> = (typeof authPolicies)[A]["credential"] extends "service-token"
  ? { tenant: ProvenTenant; actor: (typeof authPolicies)[A]["actor"] extends "required" ? string : string | undefined; actorDid: string | undefined }
  : { tenant?: undefined; actor?: undefined; actorDid?: undefined };

/** The middleware chain's view, filled in step by step: the tenant is set before its custody is proven. */
interface UnprovenCaller {
  tenant?: Tenant;
  actor?: string;
  actorDid?: string;
}

type Caller<R extends RouteDef> = RouteDef extends R ? UnprovenCaller : CallerOf<R["auth"]>;

/** Everything one request carries through the middleware chain into its handler. */
export type RouteCall<R extends RouteDef = RouteDef> = Caller<R> & {
  route: R;
  req: HttpRequest;
  /** The ports the route declared in `uses` (all of them in the middleware chain's view). */
  deps: RouteDef extends R ? Deps : DepsFor<R["uses"][number]>;
  requestId: string;
  log: Logger;
  /** The request's SQL, counted for the request log line; on a read route its first read carries the rate-limit take. */
  sql: Sql & { readonly count: number };
  clientIp: string;
  body: Specific<R, RouteBody<R>>;
  query: Specific<R, RouteQuery<R>>;
  params: Specific<R, RouteParams<R>>;
  /** Set while the request holds an Idempotency-Key: hand it to the write that answers the request. */
  idempotency?: IdempotencyClaim;
  /** Set while the request holds an Idempotency-Key: frees it (a no-op once its write has stored the answer). */
  releaseIdempotencyKey?: () => Promise<void>;
  /** Headers every response of this request carries (rate-limit state, replay marker). */
  responseHeaders: Record<string, string>;
};

export type Reply<R extends RouteDef = RouteDef> =
  | { status?: number; data: RouteData<R>; headers?: Record<string, string> }
  | { raw: HttpResponse };

/** The default (`any`) erases the route type where any route's implementation is accepted (hosts, adapters). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface RouteImpl<R extends RouteDef = any> {
  route: R;
  run(call: RouteCall<R>): Promise<Reply<R>>;
}

export const implement = <R extends RouteDef>(route: R, run: (call: RouteCall<R>) => Promise<Reply<R>>): RouteImpl<R> => ({
  route,
  run,
});
