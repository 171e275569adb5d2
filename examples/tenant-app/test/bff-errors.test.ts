import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { backends } from "../../../test/support/databases";
import { startTestService, type TestService } from "../../../test/support/test-service";
import { startTenantApp } from "../tenant-app";

const webhookSecret = "tenant-app-webhook-secret-000000000000000";
const cookie = "demo_user=ann";

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

/** Whose fault an error is, as the BFF tells the page: its own refusal (4xx), the service out of reach (502), its own failure (500). */
describe("the tenant app's error answers", () => {
  describe("with the service out of reach", () => {
    let app: Awaited<ReturnType<typeof startTenantApp>>;
    beforeAll(async () => {
      // Port 9 (discard) has no listener here: every call is a network error, answered at once (no retries).
      app = await startTenantApp({ service: { baseUrl: "http://127.0.0.1:9", token: "unused-token-0000000000000000000000", maxRetries: 0 }, webhookSecret, listen: { port: 0 } });
    });
    afterAll(() => app?.close());

    it("a body that is JSON but not an object (null, an array, a number) is refused 400 BAD_REQUEST, before the service is called", async () => {
      for (const body of ["null", "[]", "5", '"ann"']) {
        for (const [route, headers] of [["/api/session", {}], ["/api/posts", { cookie }]] as const) {
          const res = await post(`${app.url}${route}`, body, headers);
          expect({ body, route, status: res.status }).toEqual({ body, route, status: 400 });
          expect(await res.json()).toEqual({ error: { code: "BAD_REQUEST", message: "the body must be a JSON object" } });
        }
      }
    });

    it("a call the service could not be reached for is 502 UPSTREAM", async () => {
      const res = await fetch(`${app.url}/api/posts/3kabcdefghijk`, { headers: { cookie } });
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({ error: { code: "UPSTREAM", message: "the service could not be reached" } });
    });
  });

  describe("with the service up", () => {
    let dir: string;
    let svc: TestService;
    let app: Awaited<ReturnType<typeof startTenantApp>>;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), "tenant-errors-"));
      svc = await startTestService({ driver: "node", sql: backends[0]!.open, env: { SVC_PROCESSING_STUB: "true" } });
      // The app's prompt list cannot be written: its state file is a directory.
      app = await startTenantApp({ service: { baseUrl: svc.baseUrl, token: svc.tenants.alpha.token }, webhookSecret, listen: { port: 0 }, stateFile: dir });
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await svc?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("the app's own failure is 500 INTERNAL, not blamed on the service, which did answer; the app's log says what failed", async () => {
      const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        const res = await post(`${app.url}/api/posts`, JSON.stringify({ text: "a prompt the app cannot list" }), { cookie });
        expect(res.status).toBe(500);
        expect(await res.json()).toEqual({ error: { code: "INTERNAL", message: "the app failed to answer" } });
        expect(logged).toHaveBeenCalledWith("tenant app: request failed", expect.objectContaining({ code: "EISDIR" }));
      } finally {
        logged.mockRestore();
      }
    });
  });
});
