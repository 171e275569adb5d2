import type { MiddlewareObj } from "@middy/core";
import { DomainError } from "../../domain-error";
import type { RouteCall } from "../route-call";

/**
 * No handler of a tenant runs before the tenant's DID custody is proven (a cached proof, usually); from here on the
 * call's tenant is a `ProvenTenant`, which is what the handlers' caller types promise.
 */
export const proveCustody = (): MiddlewareObj<RouteCall> => ({
  before: async ({ event: call }) => {
    const { tenant } = call;
    if (!tenant) return;
    await call.deps.custody.prove(tenant);
    // prove() already refuses a tenant without a DID; this keeps the narrowing honest should a custody stand-in not.
    if (!tenant.did) throw new DomainError("TENANT_UNAVAILABLE", "Custody of the tenant's DID is not proven");
  },
});
