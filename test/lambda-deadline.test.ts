import { DatabaseResumingException, type RDSDataClient } from "@aws-sdk/client-rds-data";
import type { Context } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "../functions/routes";
import { lambdaHandler } from "../core/runtime/lambda/lambda-handler";
import { handler as notFound } from "../functions/not-found";
import { loadRouteImpls } from "../core/runtime/node/load-routes";
import { openRdsData } from "../core/sql/rds-data";
import { backends } from "./support/databases";
import { apiGatewayEvent, startTestService, type TestService } from "./support/test-service";

/**
 * A Data API client that answers every statement with an empty result until Aurora "pauses"; from then on every
 * call is DatabaseResumingException, as while Serverless v2 wakes from 0 ACU.
 */
const pausingClient = () => {
  let paused = false;
  const client = {
    async send(command: { constructor: { name: string } }) {
      if (paused) throw new DatabaseResumingException({ message: "The database is resuming", $metadata: {} });
      return command.constructor.name === "BeginTransactionCommand" ? { transactionId: "tx" } : { records: [], columnMetadata: [] };
    },
  };
  return { client: client as unknown as RDSDataClient, pause: () => void (paused = true) };
};

const lambdaContext = (remainingMs: number): Context => {
  const end = Date.now() + remainingMs;
  return { getRemainingTimeInMillis: () => end - Date.now() } as Context;
};

describe("a Lambda over a resuming Aurora", () => {
  let svc: TestService;
  const aurora = pausingClient();
  beforeAll(async () => {
    svc = await startTestService({
      driver: "lambda",
      sql: async () => openRdsData({ database: "svc", resourceArn: "arn:cluster", secretArn: "arn:secret", client: aurora.client }),
    });
    aurora.pause();
  });
  afterAll(() => svc?.close());

  it("Data API wake-up retries are bounded by the invocation's remaining time: 503 SERVICE_UNAVAILABLE before the function is cut off", async () => {
    const impl = (await loadRouteImpls()).find((i) => i.route === routes.createPost)!;
    const handler = lambdaHandler(impl, async () => svc.deps);
    const url = new URL("/api/v1/posts", svc.baseUrl);
    const headers = { authorization: `Bearer ${svc.tenants.alpha.token}`, "x-svc-acting-actor": "sleepy", "content-type": "application/json" };
    const started = Date.now();
    const result = await handler(apiGatewayEvent("POST", url, routes.createPost.path, {}, headers, Buffer.from('{"text":"wake up"}')), lambdaContext(3_000));
    const took = Date.now() - started;
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body!).error.code).toBe("SERVICE_UNAVAILABLE");
    expect(took).toBeLessThan(3_000);
  });
});

describe("API Gateway's catch-all route", () => {
  it("answers the envelope 404 with the client's X-Request-ID echoed, else a fresh UUID (API Gateway's own id is none)", async () => {
    const sent = "3f2504e0-4f89-41d3-9a0c-0305e82c3302";
    const url = new URL("/api/v1/nowhere", "http://127.0.0.1");
    const echoed = await notFound(apiGatewayEvent("GET", url, "$default", {}, { "x-request-id": sent }));
    expect(echoed.statusCode).toBe(404);
    expect(echoed.headers!["X-Request-ID"]).toBe(sent);
    expect(JSON.parse(echoed.body!)).toMatchObject({ success: false, error: { code: "NOT_FOUND" }, requestId: sent });
    const fresh = await notFound(apiGatewayEvent("GET", url, "$default", {}, {}));
    expect(fresh.headers!["X-Request-ID"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("a Lambda whose ports could not be built", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver: "lambda", sql: backends[0]!.open });
  });
  afterAll(() => svc?.close());

  it("answers 503 SERVICE_UNAVAILABLE in the envelope, and its next call builds them again", async () => {
    const impl = (await loadRouteImpls()).find((i) => i.route === routes.getPost)!;
    let builds = 0;
    const handler = lambdaHandler(impl, async () => {
      if (++builds === 1) throw new Error("SSM: Rate exceeded");
      return svc.deps;
    });
    const url = new URL("/api/v1/posts/3kabcdefghijk", svc.baseUrl);
    const sent = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
    const event = () => apiGatewayEvent("GET", url, routes.getPost.path, { postId: "3kabcdefghijk" }, { authorization: `Bearer ${svc.tenants.alpha.token}`, "x-request-id": sent });
    const first = await handler(event());
    expect(first.statusCode).toBe(503);
    expect(JSON.parse(first.body!)).toMatchObject({ success: false, error: { code: "SERVICE_UNAVAILABLE" }, requestId: sent });
    // The client's own UUID, echoed as on every answer.
    expect(first.headers!["X-Request-ID"]).toBe(sent);
    expect(JSON.stringify(first)).not.toContain("Rate exceeded");
    const second = await handler(event());
    expect(second.statusCode).toBe(404);
    expect(builds).toBe(2);
  });
});

describe("a route Lambda given a malformed request target", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver: "lambda", sql: backends[0]!.open });
  });
  afterAll(() => svc?.close());

  // API Gateway may pass such a target to a route it matched; the Node host and the catch-all refuse it, so must this.
  it.each([
    ["a path starting //", "//api/v1/posts/3kabcdefghijk", ""],
    ["a malformed percent escape in the query", "/api/v1/posts/3kabcdefghijk", "x=%zz"],
  ])("%s is 400 VALIDATION_ERROR before the route runs", async (_, rawPath, rawQueryString) => {
    const impl = (await loadRouteImpls()).find((i) => i.route === routes.getPost)!;
    const handler = lambdaHandler(impl, async () => svc.deps);
    const event = apiGatewayEvent("GET", new URL("/api/v1/posts/3kabcdefghijk", svc.baseUrl), routes.getPost.path, { postId: "3kabcdefghijk" }, { authorization: `Bearer ${svc.tenants.alpha.token}` });
    const result = await handler({ ...event, rawPath, rawQueryString });
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body!).error).toEqual({ code: "VALIDATION_ERROR", message: "malformed request target" });
  });
});
