import type { RouteDef } from "../../http/route";
import type { RouteImpl } from "../../http/route-call";
import { routeScopes } from "./function-scopes";
import { lambdaDeps } from "./lambda-deps";
import { lambdaHandler, type ApiGatewayHandler } from "./lambda-handler";
import type { PortLoaders } from "./port-loader";

/**
 * One route's Lambda: a loader for each port in its `uses` (`{ sql: rdsDataSql, blobs: s3Blobs }`), checked by the
 * compiler, and the HTTP pipeline every route runs. Job functions use lambda-deps.ts without it.
 */
export const lambda = <R extends RouteDef>(impl: RouteImpl<R>, loaders: PortLoaders<R["uses"][number]>): ApiGatewayHandler => {
  const missing = impl.route.uses.filter((name) => !(name in loaders));
  if (missing.length) throw new Error(`${impl.route.file}: no Lambda loader for the ports ${missing.join(", ")} its route uses`);
  return lambdaHandler(impl, lambdaDeps(loaders, routeScopes(impl.route)));
};
