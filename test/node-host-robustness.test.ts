import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, repoRoot } from "./support/databases";
import { rawRequest } from "./support/raw-http";
import { startTestService, type TestService } from "./support/test-service";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// The request targets that ended the process: each was parsed outside the host's error handling.
const malformedTargets = ["//%zz/", "http://%zz/", "http://[/", "http://x:99999/", "//a:b@/", "http://1.2.3.4.5.6/", "HTTP://[::1/"];

const portOf = (svc: TestService) => Number(new URL(svc.baseUrl).port);

describe.each(backends)("the Node host on $name", ({ open }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: open });
  });
  afterAll(() => svc?.close());

  it.each(malformedTargets)("a malformed request target (%s) is a 400 envelope with X-Request-ID, and the host serves on", async (target) => {
    const res = await rawRequest(portOf(svc), `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(400);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ success: false, error: { code: "VALIDATION_ERROR" } });
    expect(res.headers["x-request-id"]).toMatch(UUID);
    expect(body.requestId).toBe(res.headers["x-request-id"]);
    expect((await svc.get("/health", { token: null })).status).toBe(200);
  });

  it("an HTTP/1.1 request without Host is a 400 envelope with X-Request-ID, as RFC 9112 requires, and the host serves on", async () => {
    const res = await rawRequest(portOf(svc), `GET /health HTTP/1.1\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ success: false, error: { code: "VALIDATION_ERROR", message: "the Host header is required" }, requestId: res.headers["x-request-id"] });
    expect(res.headers["x-request-id"]).toMatch(UUID);
    expect((await svc.get("/health", { token: null })).status).toBe(200);
  });

  it("an X-Svc-Acting-Actor sent twice is 400 VALIDATION_ERROR, never a post by the joined name", async () => {
    const body = '{"text":"who am I"}';
    const res = await rawRequest(
      portOf(svc),
      `POST /api/v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${svc.tenants.alpha.token}\r\nX-Svc-Acting-Actor: alice\r\nX-Svc-Acting-Actor: bob\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: "VALIDATION_ERROR", issues: [{ path: ["headers", "X-Svc-Acting-Actor"] }] } });
    // The joined name is no actor at all: an actor id holds no comma.
    const joined = await svc.get("/api/v1/posts", { actor: "alice, bob" });
    expect(joined.status).toBe(400);
  });

  describe("no CORS: callers are server-side applications, never browsers", () => {
    const origin = "https://app.example";
    const corsHeaders = (headers: Record<string, string>) => Object.keys(headers).filter((name) => name.startsWith("access-control-"));
    const paths = ["/api/v1/posts", "/api/v1/posts/3kabcdefghijk", "/api/v1/audio/upload", "/api/v1/audio", "/health"];

    it.each(paths)("an OPTIONS preflight with Origin and Access-Control-Request-Method carries no Access-Control-* header: %s", async (path) => {
      const res = await svc.call("OPTIONS", path, {
        token: null,
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
      expect(corsHeaders(res.headers)).toEqual([]);
    });

    it("a GET with Origin is answered with no Access-Control-* header", async () => {
      const res = await svc.get("/api/v1/posts", { actor: "cors-1", headers: { origin } });
      expect(res.status).toBe(200);
      expect(corsHeaders(res.headers)).toEqual([]);
      expect(corsHeaders((await svc.get("/health", { token: null, headers: { origin } })).headers)).toEqual([]);
    });
  });

  it("a well-formed absolute-form request target is served like its origin form", async () => {
    const res = await rawRequest(portOf(svc), `GET ${svc.baseUrl}/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(200);
  });
});

describe("a serving process", () => {
  it("an unexpected rejection or exception anywhere is logged at error level and never exits the process", () => {
    const script = [
      'import { keepServing } from "./core/runtime/node/keep-serving.ts";',
      'import { createLogger } from "./core/observability/logger.ts";',
      'keepServing(createLogger("info"));',
      'Promise.reject(new Error("nobody awaited this"));',
      // The line after the throw is scheduled by the callback that throws: it runs only if the process lives on.
      'setTimeout(() => { setImmediate(() => console.log("still serving")); throw new Error("thrown from a callback"); });',
    ].join("\n");
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repoRoot, encoding: "utf8" });
    expect(run.status).toBe(0);
    const lines = `${run.stdout}\n${run.stderr}`.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: "ERROR", error: expect.objectContaining({ message: "nobody awaited this" }) }),
        expect.objectContaining({ level: "ERROR", error: expect.objectContaining({ message: "thrown from a callback" }) }),
      ]),
    );
    expect(run.stdout).toContain("still serving");
  });

  it("the rendition service (npm run rendition) logs an unexpected rejection and serves on, as the API host does", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "rendition-serves-on-"));
    // Loaded before the service: a rejection nobody awaits, made when the test asks for it (SIGUSR2) once the service is up.
    const inject = path.join(dir, "reject-on-signal.mjs");
    await writeFile(inject, 'process.on("SIGUSR2", () => void Promise.reject(new Error("nobody awaited this")));\n');
    const child = spawn(process.execPath, ["--import", "tsx", "--import", pathToFileURL(inject).href, "core/rendition/rendition-main.ts"], {
      cwd: repoRoot,
      env: { ...process.env, NODE_ENV: "production", SVC_BLOB_DIR: path.join(dir, "blobs"), RENDITION_SERVICE_TOKEN: "r".repeat(40), RENDITION_PORT: "0", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const lines: Record<string, any>[] = [];
      for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on("line", (line) => line.startsWith("{") && lines.push(JSON.parse(line)));
      await expect.poll(() => lines.find((l) => l.message === "rendition service listening"), { timeout: 20_000 }).toBeDefined();
      child.kill("SIGUSR2");
      await expect.poll(() => lines.some((l) => l.level === "ERROR" && l.error?.message === "nobody awaited this"), { timeout: 10_000 }).toBe(true);
      const url = lines.find((l) => l.message === "rendition service listening")!.url as string;
      expect((await fetch(`${url}/v1/none`, { method: "POST", headers: { authorization: `Bearer ${"r".repeat(40)}` } })).status).toBe(404);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
