import type { RouteImpl } from "../../http/route-call";

/**
 * Every route's implementation, from the route table in `functions/routes.ts`. Loaded dynamically: only the
 * hosts that serve every route (the Node host, the tests) read the table, and `core/` never imports `functions/`
 * statically.
 */
export const loadRouteImpls = async (): Promise<RouteImpl[]> => Object.values((await import("../../../functions/routes")).routeImpls);
