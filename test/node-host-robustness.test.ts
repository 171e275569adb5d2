import { spawnSync } from "node:child_process";
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
});
