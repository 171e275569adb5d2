/**
 * The request log (docs/operations.md#where-to-look): every request writes its one `request` line, the
 * refused ones too, and every line a request causes, an in-request processing pass's included, carries its id.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { handler as notFound } from "../functions/not-found";
import { backends } from "./support/databases";
import { logRecorder, type LogLine } from "./support/log-recorder";
import { rawRequest } from "./support/raw-http";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { apiGatewayEvent, startTestService, type DriverName, type TestService } from "./support/test-service";

const systemToken = "test-system-token-0123456789abcdef0123";

describe.each(["node", "lambda"] as DriverName[])("the request log on the %s driver", (driver) => {
  let svc: TestService;
  const { logger, lines } = logRecorder();
  beforeAll(async () => {
    svc = await startTestService({ driver, sql: backends[0]!.open, logger, env: { SVC_PROCESSING_INLINE: "true", SVC_PROCESSING_STUB: "true" } });
    // The tenant's custody is proven (and logged) once per process, by its first request: done here.
    expect((await svc.get("/api/v1/posts", { actor: "log-0" })).status).toBe(200);
  });
  afterAll(() => svc?.close());

  /** The lines logged while `request` ran, each with the request id it carries. */
  const linesOf = async (request: () => Promise<{ status: number }>, status: number): Promise<LogLine[]> => {
    const from = lines.length;
    expect((await request()).status).toBe(status);
    return lines.slice(from);
  };
  const runJobLines = (logged: LogLine[]) => logged.filter((line) => line.fields.invocation === "run-job");

  it("a processing pass run inside a create, a PATCH or the system route logs every line under that request's X-Request-ID", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const created = randomUUID();
    let postId = "";
    const create = await linesOf(async () => {
      const res = await svc.post("/api/v1/posts", { actor: "log-1", json: audioPost(blob, { waveform: true }), headers: { "x-request-id": created } });
      postId = res.json.data?.postId;
      return res;
    }, 201);
    expect(runJobLines(create)).toHaveLength(1);
    expect(create.filter((line) => line.message === "stage settled").length).toBeGreaterThan(0);
    expect(create.filter((line) => line.fields.requestId !== created)).toEqual([]);

    const patched = randomUUID();
    const patch = await linesOf(
      () => svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "log-1", json: { processing: { transcribe: true } }, headers: { "x-request-id": patched } }),
      202,
    );
    expect(runJobLines(patch)).toHaveLength(1);
    expect(patch.filter((line) => line.fields.requestId !== patched)).toEqual([]);

    const system = randomUUID();
    const pass = await linesOf(
      () => svc.post("/api/v1/system/process-audio", { token: systemToken, json: { appId: "alpha", postId }, headers: { "x-request-id": system } }),
      200,
    );
    expect(runJobLines(pass)).toHaveLength(1);
    expect(pass.filter((line) => line.fields.requestId !== system)).toEqual([]);
  });

  it("a malformed request target refused before any route writes its one `request` line, with its request id, method, path, status and errorCode", async () => {
    const sent = randomUUID();
    const refused = await linesOf(() => svc.get("/api/v1/posts?cursor=%zz", { actor: "log-2", headers: { "x-request-id": sent } }), 400);
    expect(refused.map(({ level, message, fields }) => ({ level, message, ...fields }))).toEqual([
      { level: "info", message: "request", requestId: sent, method: "GET", path: "/api/v1/posts", status: 400, errorCode: "VALIDATION_ERROR" },
    ]);
  });
});

describe("the request log of the Node host's own refusals", () => {
  let svc: TestService;
  const { logger, lines } = logRecorder();
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: backends[0]!.open, logger });
  });
  afterAll(() => svc?.close());
  const port = () => Number(new URL(svc.baseUrl).port);
  const token = () => svc.tenants.alpha.token;

  it.each([
    ["an unknown route", (id: string) => `GET /nope?secret=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token()}\r\nX-Request-ID: ${id}\r\nConnection: close\r\n\r\n`, 404, "NOT_FOUND", "GET", "/nope"],
    ["a malformed target", (id: string) => `GET /api/v1/posts/%zz HTTP/1.1\r\nHost: x\r\nX-Request-ID: ${id}\r\nConnection: close\r\n\r\n`, 400, "VALIDATION_ERROR", "GET", "/api/v1/posts/%zz"],
    ["an HTTP/1.1 request without Host", (id: string) => `GET /health HTTP/1.1\r\nX-Request-ID: ${id}\r\nConnection: close\r\n\r\n`, 400, "VALIDATION_ERROR", "GET", "/health"],
    ["a Host that is no host", (id: string) => `GET /health HTTP/1.1\r\nHost: a b\r\nX-Request-ID: ${id}\r\nConnection: close\r\n\r\n`, 400, "VALIDATION_ERROR", "GET", "/health"],
    [
      "HTTP/1.0 with Transfer-Encoding",
      (id: string) => `POST /api/v1/posts HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\nX-Request-ID: ${id}\r\n\r\n0\r\n\r\n`,
      400,
      "VALIDATION_ERROR",
      "POST",
      "/api/v1/posts",
    ],
    ["CONNECT", (id: string) => `CONNECT user:pw@example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-ID: ${id}\r\n\r\n`, 404, "NOT_FOUND", "CONNECT", "example.com:443"],
  ] as const)("%s refused by the host writes one `request` line at info, with no header value", async (_case, request, status, errorCode, method, path) => {
    const sent = randomUUID();
    const from = lines.length;
    const res = await rawRequest(port(), request(sent));
    expect(res.status).toBe(status);
    expect(res.headers["x-request-id"]).toBe(sent);
    await expect.poll(() => lines.length).toBeGreaterThan(from);
    const logged = lines.slice(from);
    expect(logged.map(({ level, message, fields }) => ({ level, message, ...fields }))).toEqual([{ level: "info", message: "request", requestId: sent, method, path, status, errorCode }]);
    expect(JSON.stringify(logged)).not.toContain(token());
  });
});

describe("the request log of API Gateway's catch-all route (functions/not-found.ts)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("an unknown path answered 404 by the catch-all writes one `request` line at info, with its request id, method, path, status and errorCode", async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const sent = randomUUID();
    const url = new URL("https://svc.example/nope?secret=1");
    const result = await notFound(apiGatewayEvent("DELETE", url, "$default", {}, { "x-request-id": sent, authorization: "Bearer not-to-be-logged" }));
    vi.restoreAllMocks();
    expect(result.statusCode).toBe(404);
    const logged = written.join("").split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "INFO", message: "request", requestId: sent, method: "DELETE", path: "/nope", status: 404, errorCode: "NOT_FOUND" });
    expect(written.join("")).not.toContain("not-to-be-logged");
  });
});
