import { decodePathSegment } from "../../http-message/percent-encoding";
import { routeMethods, type RouteDef } from "../../http/route";

export interface RouteMatch<R extends RouteDef> {
  route: R;
  params: Record<string, string>;
}

/** Matches method and path against the route table's templates (`/api/v1/posts/{postId}`). */
export const createRouteMatcher = <R extends RouteDef>(routes: readonly R[]) => {
  const compiled = routes.map((route) => {
    const names: string[] = [];
    const pattern = route.path
      .split("/")
      .map((segment) => {
        const param = segment.match(/^\{(\w+)\}$/);
        if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        names.push(param[1]!);
        return "([^/]+)";
      })
      .join("/");
    return { route, names, regex: new RegExp(`^${pattern}$`) };
  });
  return (method: string, path: string): RouteMatch<R> | undefined => {
    for (const { route, names, regex } of compiled) {
      if (!routeMethods(route).includes(method)) continue;
      const m = regex.exec(path);
      if (!m) continue;
      return { route, params: Object.fromEntries(names.map((name, i) => [name, decodePathSegment(m[i + 1]!)])) };
    }
    return undefined;
  };
};
