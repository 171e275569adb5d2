import type { Tenant } from "../config/types";
import type { Deps } from "../deps";
import type { Logger } from "../observability/logger";
import type { Sql } from "../sql/port";
import type { RouteBody, RouteData, RouteDef, RouteParams, RouteQuery } from "./route";
import type { HttpRequest, HttpResponse } from "./types";

/** Parsed input is typed per route; the middleware chain, which serves every route, sees it as unknown. */
type Specific<R extends RouteDef, T> = RouteDef extends R ? unknown : T;

export interface IdempotencyClaim {
  scope: { appId: string; actor: string; route: string; key: string };
  /** Set by a handler that marked the key done inside its own write statement. */
  completed: boolean;
}

/** Everything one request carries through the middleware chain into its handler. */
export interface RouteCall<R extends RouteDef = RouteDef> {
  route: R;
  req: HttpRequest;
  deps: Deps;
  requestId: string;
  log: Logger;
  /** The request's SQL, counted for the request log line. */
  sql: Sql & { readonly count: number };
  clientIp: string;
  /** Set for service-token routes. */
  tenant?: Tenant;
  actor?: string;
  actorDid?: string;
  body: Specific<R, RouteBody<R>>;
  query: Specific<R, RouteQuery<R>>;
  params: Specific<R, RouteParams<R>>;
  idempotency?: IdempotencyClaim;
  /** Headers every response of this request carries (rate-limit state, replay marker). */
  responseHeaders: Record<string, string>;
}

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
