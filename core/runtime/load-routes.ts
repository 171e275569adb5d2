import type { RouteImpl } from "../http/route-call";
import { routeList } from "../routes";

/** Imports every route's implementation from `functions/<file>.ts`, as the table names them. */
export const loadRouteImpls = async (): Promise<RouteImpl[]> =>
  Promise.all(
    routeList.map(async (route) => {
      const mod = (await import(`../../functions/${route.file}.ts`)) as { default?: RouteImpl };
      if (mod.default?.route !== route) throw new Error(`functions/${route.file}.ts must export default the implementation of its route`);
      return mod.default;
    }),
  );
