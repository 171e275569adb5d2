import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteDef } from "../core/http/route";
import { routeList } from "../functions/routes";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/** Every route that takes the system token: the /api/v1/system/* routes (test/public-surface.test.ts lists them). */
const systemRoutes = (routeList as readonly RouteDef[]).filter((route) => route.auth === "system").map((route) => [route.method, route.path] as const);

/**
 * With SYSTEM_AUTH_TOKEN unset the system routes fail closed, 503 SERVICE_UNAVAILABLE, whatever the caller sends:
 * the token a worker would have been given, a tenant's service token, or none at all.
 */
describe.each(edgeMatrix)("system routes with SYSTEM_AUTH_TOKEN unset, over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql, env: { SYSTEM_AUTH_TOKEN: "" } });
  });
  afterAll(() => svc?.close());

  it("are the three /api/v1/system/* routes", () => {
    expect(systemRoutes.map(([, path]) => path).sort()).toEqual(["/api/v1/system/process-audio", "/api/v1/system/webhook-events", "/api/v1/system/webhook-events/redeliver"]);
  });

  it.each(systemRoutes)("%s %s answers 503 SERVICE_UNAVAILABLE, with a system-style token, a tenant's token or none", async (method, path) => {
    const credentials: [string, string | undefined][] = [
      ["a system-style token", "Bearer test-system-token-0123456789abcdef0123"],
      ["a tenant's service token", `Bearer ${svc.tenants.alpha.token}`],
      ["no token", undefined],
    ];
    for (const [label, authorization] of credentials) {
      const res = await svc.call(method, method === "GET" ? `${path}?appId=alpha` : path, {
        token: null,
        json: method === "GET" ? undefined : { appId: "alpha", postId: "3kabcdefghijk" },
        headers: authorization ? { authorization } : {},
      });
      expect(res.status, label).toBe(503);
      expect(res.json.error.code, label).toBe("SERVICE_UNAVAILABLE");
    }
  });
});
