/** The rendition Lambda: function URL events in, the same envelope out; and its bundle carries no file store. */
import path from "node:path";
import { build } from "esbuild";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { describe, expect, it, vi } from "vitest";

const event = (body: string, authorization?: string): APIGatewayProxyEventV2 =>
  ({
    version: "2.0",
    routeKey: "$default",
    rawPath: "/v1/trim",
    rawQueryString: "",
    headers: { "content-type": "application/json", ...(authorization && { authorization }) },
    requestContext: { http: { method: "POST", path: "/v1/trim", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "test" } },
    body: Buffer.from(body).toString("base64"),
    isBase64Encoded: true,
  }) as unknown as APIGatewayProxyEventV2;

describe("rendition Lambda", () => {
  it("that cannot start answers 503 SERVICE_UNAVAILABLE in the envelope, not the function URL's bare 502, and its next call starts it", async () => {
    vi.resetModules();
    const saved = { ...process.env };
    try {
      Object.assign(process.env, { SVC_BLOB_DIR: "/tmp/not-on-lambda", RENDITION_SERVICE_TOKEN: "lambda-rendition-token-000000000000000000", LOG_LEVEL: "silent" });
      delete process.env.SVC_BLOB_BUCKET;
      const { handler } = await import("./rendition");
      const failed = await handler(event("{}", "Bearer nope"));
      expect(failed.statusCode).toBe(503);
      expect(JSON.parse(failed.body!)).toMatchObject({ success: false, error: { code: "SERVICE_UNAVAILABLE" }, requestId: failed.headers!["X-Request-ID"] });
      delete process.env.SVC_BLOB_DIR;
      process.env.SVC_BLOB_BUCKET = "rendition-test-bucket";
      expect((await handler(event("{}", "Bearer nope"))).statusCode).toBe(401);
    } finally {
      process.env = saved;
      vi.resetModules();
    }
  });

  it("answers function URL events with the envelope: 401 for a wrong token, 400 for a bad body", async () => {
    process.env.SVC_BLOB_BUCKET = "rendition-test-bucket";
    process.env.RENDITION_SERVICE_TOKEN = "lambda-rendition-token-000000000000000000";
    process.env.LOG_LEVEL = "silent";
    const { handler } = await import("./rendition");
    const wrong = await handler(event("{}", "Bearer nope"));
    expect(wrong.statusCode).toBe(401);
    expect(JSON.parse(wrong.body!)).toMatchObject({ success: false, error: { code: "UNAUTHORIZED" } });
    const bad = await handler(event("{}", `Bearer ${process.env.RENDITION_SERVICE_TOKEN}`));
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body!).error.code).toBe("VALIDATION_ERROR");
  });

  it("bundles without the file store, PGlite or node-postgres", async () => {
    const result = await build({
      entryPoints: [path.resolve(import.meta.dirname, "rendition.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((i) => /fs-blob-store|pglite|node_modules\/pg\/|core\/sql\//.test(i))).toEqual([]);
  });
});
