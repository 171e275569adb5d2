import { Api, type StackContext } from "sst/constructs";
import { routeList } from "../functions/routes";

/**
 * One Lambda per route of the route table behind an HTTP API. The data stores (Aurora with the Data API, the blob
 * bucket) and the processing queue are wired in by the stacks issue; until then this stack only shapes the routes.
 */
export function ApiStack({ stack }: StackContext) {
  const routes: Record<string, string> = {};
  for (const route of routeList) {
    const handler = `functions/${route.file}.handler`;
    routes[`${route.method} ${route.path}`] = handler;
    if ("head" in route && route.head) routes[`HEAD ${route.path}`] = handler;
  }
  const api = new Api(stack, "api", { routes });
  stack.addOutputs({ url: api.url });
}
