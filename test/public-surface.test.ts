import { describe, expect, it } from "vitest";
import { routeMethods, type RouteDef } from "../core/http/route";
import { openApiDocument } from "../core/openapi/openapi-document";
import { routeList } from "../functions/routes";

/**
 * The service's surface is exactly the contract's routes: the route table (which the Node host mounts, the stacks
 * deploy and the OpenAPI description is generated from) against the lists below. A route added, removed or moved
 * fails here until the contract, and this list, change with it.
 */

/** The interface's endpoints. */
const interfaceRoutes = [
  "POST /api/v1/audio/upload",
  "GET /api/v1/audio",
  "POST /api/v1/posts",
  "GET /api/v1/posts",
  "GET /api/v1/posts/{postId}",
  "GET /api/v1/posts/{postId}/replies",
  "PATCH /api/v1/posts/{postId}",
  "GET /health",
  "GET /api/reference",
];

/**
 * Ours beside them: playback answers HEAD (docs/decisions.md#playback-and-upload), the description
 * (docs/decisions.md#health-and-reference) and the direct-to-S3 upload pair (docs/decisions.md#playback-and-upload).
 */
const addedRoutes = ["HEAD /api/v1/audio", "GET /openapi.json", "POST /api/v1/audio/uploads", "POST /api/v1/audio/uploads/{uploadId}/complete"];

/** Served but not described: the reference page's own script (docs/decisions.md#health-and-reference: no CDN). */
const undescribedRoutes = ["GET /api/reference/standalone.js"];

/** The interface's internal service-to-service routes under /api/v1/system/, excluded from the description. */
const systemRoutes = ["POST /api/v1/system/process-audio", "GET /api/v1/system/webhook-events", "POST /api/v1/system/webhook-events/redeliver"];

const routes = routeList as readonly RouteDef[];
const pairs = (list: readonly RouteDef[]) => list.flatMap((route) => routeMethods(route).map((method) => `${method} ${route.path}`)).sort();
const sorted = (...lists: string[][]) => lists.flat().sort();

describe("the public surface is exactly the interface's routes", () => {
  it("the route table serves the interface's routes, our additions, the reference script and the system routes, and nothing else", () => {
    expect(pairs(routes)).toEqual(sorted(interfaceRoutes, addedRoutes, undescribedRoutes, systemRoutes));
  });

  it("the routes described publicly are the interface's and our additions", () => {
    expect(pairs(routes.filter((route) => !route.internal))).toEqual(sorted(interfaceRoutes, addedRoutes));
  });

  it("the OpenAPI description has exactly those (method, path) pairs", () => {
    const { paths } = openApiDocument(routeList) as { paths: Record<string, Record<string, unknown>> };
    const described = Object.entries(paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
    expect(described.sort()).toEqual(sorted(interfaceRoutes, addedRoutes));
  });

  it("the system routes, and only they, live under /api/v1/system/ and take the system token", () => {
    const system = routes.filter((route) => route.path.startsWith("/api/v1/system/"));
    expect(pairs(system)).toEqual(sorted(systemRoutes));
    for (const route of routes) expect(route.auth === "system", route.path).toBe(route.path.startsWith("/api/v1/system/"));
  });
});
