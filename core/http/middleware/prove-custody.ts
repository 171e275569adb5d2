import type { MiddlewareObj } from "@middy/core";
import type { RouteCall } from "../route-call";

/** No handler of a tenant runs before the tenant's DID custody is proven (a cached proof, usually). */
export const proveCustody = (): MiddlewareObj<RouteCall> => ({
  before: async ({ event: call }) => {
    if (call.tenant) await call.deps.custody.prove(call.tenant);
  },
});
