import { describe, expectTypeOf, it } from "vitest";
import { routes } from "../../functions/routes";
import type { ProvenTenant } from "../tenancy/tenant";
import { defineRoute } from "./route";
import type { RouteCall } from "./route-call";

describe("the caller is typed by the route's auth policy", () => {
  it('a route with auth: "actor" sees a string tenant DID and a string actor', () => {
    type Call = RouteCall<typeof routes.createPost>;
    expectTypeOf<Call["tenant"]>().toEqualTypeOf<ProvenTenant>();
    expectTypeOf<Call["tenant"]["did"]>().toEqualTypeOf<string>();
    expectTypeOf<Call["actor"]>().toEqualTypeOf<string>();
  });

  it('a route with auth: "viewer" sees a string tenant DID and an optional actor', () => {
    type Call = RouteCall<typeof routes.getPost>;
    expectTypeOf<Call["tenant"]["did"]>().toEqualTypeOf<string>();
    expectTypeOf<Call["actor"]>().toEqualTypeOf<string | undefined>();
  });

  it("anonymous, public and system routes see no tenant and no actor", () => {
    expectTypeOf<RouteCall<typeof routes.getAudio>["tenant"]>().toEqualTypeOf<undefined>();
    expectTypeOf<RouteCall<typeof routes.health>["actor"]>().toEqualTypeOf<undefined>();
    const system = defineRoute({ file: "x", method: "POST", path: "/x", summary: "", auth: "system", rateLimit: null, uses: [], status: 200 });
    expectTypeOf<RouteCall<typeof system>["tenant"]>().toEqualTypeOf<undefined>();
  });

  it("a handler sees only the ports its route declares in uses", () => {
    expectTypeOf<RouteCall<typeof routes.getPost>["deps"]>().toHaveProperty("sql");
    expectTypeOf<RouteCall<typeof routes.getPost>["deps"]>().not.toHaveProperty("blobs");
    expectTypeOf<RouteCall<typeof routes.uploadAudio>["deps"]>().toHaveProperty("blobs");
    expectTypeOf<RouteCall<typeof routes.openapi>["deps"]>().not.toHaveProperty("sql");
  });
});
