/**
 * What the route table's policies must say (docs/decisions.md#envelope-and-errors, docs/decisions.md#rate-limits), checked on the table itself so a new
 * route cannot slip past them: where public paths live, which route is open without a token, and that every
 * caller-facing route is rate limited.
 */
import { describe, expect, it } from "vitest";
import { routeList } from "./routes";

const named = (route: { method: string; path: string }) => `${route.method} ${route.path}`;

describe("the route table's policies", () => {
  it("every route is under /api/v1/ except /health, /openapi.json and the reference page with its script", () => {
    const outside = routeList.filter((route) => !route.path.startsWith("/api/v1/")).map(named).sort();
    expect(outside).toEqual(["GET /api/reference", "GET /api/reference/standalone.js", "GET /health", "GET /openapi.json"]);
  });

  it("the only route open without a credential and limited by client IP (auth anonymous) is playback, GET /api/v1/audio", () => {
    expect(routeList.filter((route) => route.auth === "anonymous").map(named)).toEqual(["GET /api/v1/audio"]);
  });

  it("every route whose auth is actor, viewer or anonymous has a rate limit", () => {
    const callerFacing = routeList.filter((route) => ["actor", "viewer", "anonymous"].includes(route.auth));
    expect(callerFacing.length).toBeGreaterThan(0);
    expect(callerFacing.filter((route) => route.rateLimit === null).map(named)).toEqual([]);
  });
});
