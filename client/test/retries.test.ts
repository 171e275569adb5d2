import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TestService } from "../../test/support/test-service";
import { backoffMs, retryDefaults } from "../src/retry-policy";
import { SvcError, SvcNetworkError } from "../src/index";
import { freshActor, recordingClient, startClientService } from "./support/client-harness";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy";
import { noiseWav } from "../../test/support/seeded-audio";

const run = promisify(execFile);

describe("retries against the real Node host behind a faulty network", () => {
  let svc: TestService;
  let proxy: FaultProxy;
  beforeAll(async () => {
    svc = await startClientService();
  });
  afterAll(() => svc?.close());
  beforeAll(async () => {
    proxy = await startFaultProxy(svc.baseUrl);
  });
  afterAll(() => proxy?.close());
  afterEach(() => {
    proxy.seen.length = 0;
  });

  const clientVia = (options: Parameters<typeof recordingClient>[2] = {}) => recordingClient(proxy.url, svc.tenants.alpha.token, options);
  const keysOf = (method: string, path: string) => proxy.to(method, path).map((r) => r.headers["idempotency-key"]);

  it("a create whose answer was lost on the wire makes exactly one post: the retry carries the same Idempotency-Key and is replayed", async () => {
    const { client } = clientVia();
    const actor = freshActor("lost");
    proxy.inject({ method: "POST", path: "/api/v1/posts" }, { kind: "lose-answer" });
    const { postId } = await client.as(actor).createPost({ text: "once" });
    const keys = keysOf("POST", "/api/v1/posts");
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    const page = await client.as(actor).listPosts();
    expect(page.items.map((p) => p.uri.split("/").pop())).toEqual([postId]);
  });

  it("a caller's Idempotency-Key is sent on every attempt, and a PATCH is retried under it too", async () => {
    const { client } = clientVia();
    const author = client.as(freshActor("key"));
    proxy.inject({ method: "POST", path: "/api/v1/posts" }, { kind: "status", status: 503 });
    const { postId } = await author.createPost({ text: "mine" }, { idempotencyKey: "caller-key-1" });
    expect(keysOf("POST", "/api/v1/posts")).toEqual(["caller-key-1", "caller-key-1"]);
    proxy.inject({ method: "PATCH" }, { kind: "reset" });
    await expect(author.patchPost(postId, { processing: { trim: true } })).rejects.toMatchObject({ status: 400 }); // a post without audio
    const patchKeys = keysOf("PATCH", `/api/v1/posts/${postId}`);
    expect(patchKeys).toHaveLength(2);
    expect(patchKeys[1]).toBe(patchKeys[0]);
  });

  it("a caller's Idempotency-Key outside the service's rule (1 to 255 printable ASCII) is refused before sending, as the service would refuse it: an SvcError 400, never sent, never retried", async () => {
    const { client } = clientVia();
    for (const key of ["ключ-1", "a\nb", "", "k".repeat(256)]) {
      const refused = await client.as(freshActor("badkey")).createPost({ text: "k" }, { idempotencyKey: key }).catch((error: unknown) => error);
      expect(refused, JSON.stringify(key)).toBeInstanceOf(SvcError);
      expect(refused).toMatchObject({ status: 400, code: "VALIDATION_ERROR", requestId: null, issues: [{ path: ["headers", "Idempotency-Key"] }] });
    }
    expect(proxy.to("POST", "/api/v1/posts")).toHaveLength(0);
    const { postId } = await client.as(freshActor("goodkey")).createPost({ text: "k" }, { idempotencyKey: "k".repeat(255) });
    expect(postId).toBeTruthy();
  });

  it("a caller's Idempotency-Key with whitespace at its ends (a key read from a file, its newline kept) is sent trimmed, as fetch and the service trim it", async () => {
    const { client } = clientVia();
    const { postId } = await client.as(freshActor("trimmed")).createPost({ text: "k" }, { idempotencyKey: `\t${"t".repeat(255)}\r\n` });
    expect(postId).toBeTruthy();
    expect(keysOf("POST", "/api/v1/posts")).toEqual(["t".repeat(255)]);
  });

  it("each call makes its own Idempotency-Key", async () => {
    const { client } = clientVia();
    const who = client.as(freshActor());
    await who.createPost({ text: "one" });
    await who.createPost({ text: "two" });
    const keys = keysOf("POST", "/api/v1/posts");
    expect(new Set(keys).size).toBe(2);
  });

  it.each([502, 503, 504, 408])("a %i is retried, with exponential backoff and jitter", async (status) => {
    const { client, delays } = clientVia();
    proxy.inject({ method: "GET" }, { kind: "status", status }, { kind: "status", status });
    const { postId } = await client.as(freshActor()).createPost({ text: "x" });
    proxy.seen.length = 0;
    await expect(client.getPost(postId)).resolves.toMatchObject({ record: { text: "x" } });
    expect(proxy.seen.map((s) => s.fault)).toEqual(["status", "status", "none"]);
    const [first, second] = delays.slice(-2);
    expect(first).toBeGreaterThanOrEqual(retryDefaults.baseDelayMs / 2);
    expect(first).toBeLessThanOrEqual(retryDefaults.baseDelayMs);
    expect(second).toBeGreaterThanOrEqual(retryDefaults.baseDelayMs);
    expect(second).toBeLessThanOrEqual(retryDefaults.baseDelayMs * 2);
  });

  it("a 500 is not retried", async () => {
    const { client } = clientVia();
    proxy.inject({ method: "GET" }, { kind: "status", status: 500, body: JSON.stringify({ success: false, error: { code: "INTERNAL", message: "boom" }, requestId: "r-1" }) });
    await expect(client.getPost("3kabcdefghijk")).rejects.toMatchObject({ status: 500, code: "INTERNAL", requestId: "r-1" });
    expect(proxy.seen).toHaveLength(1);
  });

  it("network errors are retried up to maxRetries, then fail as an SvcNetworkError, distinguishable from an answer", async () => {
    const { client, delays } = clientVia({ maxRetries: 3 });
    proxy.inject({ method: "GET" }, { kind: "reset" }, { kind: "reset" }, { kind: "reset" }, { kind: "reset" });
    const error = await client.getPost("3kabcdefghijk").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcNetworkError);
    expect(error).not.toBeInstanceOf(SvcError);
    expect((error as SvcNetworkError).timedOut).toBe(false);
    expect(proxy.seen).toHaveLength(4);
    expect(delays).toHaveLength(3);
  });

  it("a POST whose retries all failed without an answer carries its idempotencyKey on the SvcNetworkError, to call again with", async () => {
    const { client } = clientVia();
    proxy.inject({ method: "POST", path: "/api/v1/posts" }, { kind: "reset" }, { kind: "reset" }, { kind: "reset" });
    const error = await client.as(freshActor("unanswered")).createPost({ text: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcNetworkError);
    const keys = keysOf("POST", "/api/v1/posts");
    expect(keys).toHaveLength(3);
    expect((error as SvcNetworkError).idempotencyKey).toBe(keys[0]);
  });

  it("a timed-out attempt is retried; when every attempt times out the error says so", async () => {
    // A held attempt is never answered, whatever the timeout; the one not held must be answered within it, even on a
    // loaded machine. With every attempt held, a short timeout keeps the test short.
    const { client } = clientVia({ timeoutMs: 1_000 });
    proxy.inject({ method: "GET" }, { kind: "hold" });
    await expect(client.health()).resolves.toMatchObject({ ok: true });
    expect(proxy.seen.map((s) => s.fault)).toEqual(["hold", "none"]);
    proxy.inject({ method: "GET" }, { kind: "hold" }, { kind: "hold" }, { kind: "hold" });
    const error = await clientVia({ timeoutMs: 300 }).client.health().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcNetworkError);
    expect((error as SvcNetworkError).timedOut).toBe(true);
  });

  it("a 429 waits its Retry-After (up to the cap), then retries", async () => {
    const { client, delays } = clientVia();
    proxy.inject({ method: "GET" }, { kind: "status", status: 429, headers: { "retry-after": "7" } });
    await expect(client.health()).resolves.toMatchObject({ ok: true });
    expect(delays).toEqual([7000]);
  });

  it("a fractional Retry-After (which RFC 9110 does not allow) is waited for in whole seconds rounded up, not read as a date (a wait of 0)", async () => {
    const { client, delays } = clientVia();
    proxy.inject({ method: "GET" }, { kind: "status", status: 429, headers: { "retry-after": "1.5" } });
    await expect(client.health()).resolves.toMatchObject({ ok: true });
    expect(delays).toEqual([2000]);
  });

  it("the service's own 429 on reads is retried after its Retry-After, and reported with retryAfter when it persists", async () => {
    const { client, delays, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const reader = client.as(freshActor("reader"));
    for (let i = 0; i < 60; i++) await reader.getPost("3kabcdefghijk").catch(() => undefined);
    requests.length = 0;
    const error = (await reader.getPost("3kabcdefghijk").catch((e: unknown) => e)) as SvcError;
    expect(error).toMatchObject({ status: 429, code: "RATE_LIMITED" });
    expect(error.retryAfter).toBeGreaterThan(0);
    expect(error.retryAfter).toBeLessThanOrEqual(60);
    expect(requests).toHaveLength(3);
    expect(delays.every((d) => d > 0 && d <= 60_000 && d % 1000 === 0)).toBe(true);
  });

  it("an upload's POSTs are retried under one Idempotency-Key per call too, as every retried POST is", async () => {
    const { client } = clientVia();
    const who = client.as(freshActor("upload"));
    const wav = new Uint8Array(noiseWav(8_000, 16_000));
    proxy.inject({ method: "POST", path: "/api/v1/audio/upload" }, { kind: "status", status: 503 });
    await expect(who.uploadAudio(wav, { mimeType: "audio/wav" })).resolves.toMatchObject({ mimeType: "audio/wav" });
    await who.uploadAudio(wav, { mimeType: "audio/wav" });
    const keys = keysOf("POST", "/api/v1/audio/upload");
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    // The presigned route (404 on the file store) was asked under a key of its own call as well.
    expect(keysOf("POST", "/api/v1/audio/uploads").every((key) => typeof key === "string")).toBe(true);
  });

  it("completing a direct upload is retried after a 503 (a second completion answers the same blob), under one Idempotency-Key", async () => {
    const { client } = clientVia();
    proxy.inject({ method: "POST" }, { kind: "status", status: 503 });
    await expect(client.as(freshActor()).completeUpload("no-such-upload")).rejects.toMatchObject({ status: 404 });
    const keys = keysOf("POST", "/api/v1/audio/uploads/no-such-upload/complete");
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
  });

  it("completing a direct upload, retried after a 429 (answered before its route ran), carries one Idempotency-Key on both attempts", async () => {
    const { client } = clientVia();
    proxy.inject({ method: "POST" }, { kind: "status", status: 429, headers: { "retry-after": "1" } });
    await expect(client.as(freshActor()).completeUpload("no-such-upload")).rejects.toMatchObject({ status: 404 });
    const keys = keysOf("POST", "/api/v1/audio/uploads/no-such-upload/complete");
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it("an answer whose body is JSON but no object (a proxy's `null`) is an SvcError of its status, retried as one", async () => {
    const { client } = clientVia();
    proxy.inject({ method: "GET" }, { kind: "status", status: 502, body: "null" }, { kind: "status", status: 502, body: "42" }, { kind: "status", status: 502, body: "null" });
    const error = await client.getPost("3kabcdefghijk").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ status: 502, code: "SERVICE_UNAVAILABLE" });
    expect(proxy.seen).toHaveLength(3);
  });

  it("an error answer not in the service's envelope (API Gateway's) keeps its top-level message, its text and its apigw-requestid", async () => {
    const { client } = clientVia();
    const text = JSON.stringify({ message: "Request Entity Too Large" });
    proxy.inject({ method: "POST" }, { kind: "status", status: 413, body: text, headers: { "apigw-requestid": "Jk3bGiHbIAMEbDQ=" } });
    const error = await client.as(freshActor("apigw")).createPost({ text: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE", message: "Request Entity Too Large", requestId: "Jk3bGiHbIAMEbDQ=", body: text });
    expect((error as SvcError).idempotencyKey).toBe(keysOf("POST", "/api/v1/posts")[0]);
  });

  it("an error page that is not JSON (a WAF's, a CDN's) is kept as the SvcError's body, its first 4096 characters", async () => {
    const { client } = clientVia();
    const page = `<html><body>Request blocked.${" ".repeat(5_000)}</body></html>`;
    proxy.inject({ method: "GET" }, { kind: "status", status: 403, body: page, headers: { "content-type": "text/html", "x-request-id": "cdn-1" } });
    const error = await client.getPost("3kabcdefghijk").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403, code: "FORBIDDEN", message: "HTTP 403 Forbidden", requestId: "cdn-1", body: page.slice(0, 4096) });
    expect((error as SvcError).idempotencyKey).toBeUndefined();
  });

  it("the caller's abort ends the call and its retries, as an AbortError", async () => {
    const { client } = clientVia({ sleep: () => new Promise(() => {}) });
    const controller = new AbortController();
    proxy.inject({ method: "GET" }, { kind: "status", status: 503 });
    const call = client.getPost("3kabcdefghijk", { signal: controller.signal });
    await expect.poll(() => proxy.seen.length).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: "AbortError" });
    expect(proxy.seen).toHaveLength(1);
  });

  it("the caller's abort during a Retry-After wait clears the wait's timer: the process is not held open for the wait", async () => {
    proxy.inject({ method: "GET" }, { kind: "status", status: 429, headers: { "retry-after": "20" } });
    // A process of its own, on the default sleep: it exits once nothing is pending, so its lifetime shows the timer.
    const script = `
      const { createClient } = await import(${JSON.stringify(path.resolve(import.meta.dirname, "../src/index.ts"))});
      const started = Date.now();
      process.on("exit", () => console.log("exited", Date.now() - started));
      const controller = new AbortController();
      const client = createClient({ baseUrl: ${JSON.stringify(proxy.url)}, token: "t", fetch: async (url, init) => {
        const answer = await fetch(url, init);
        setTimeout(() => controller.abort(), 100); // the 429 is in: its wait has begun
        return answer;
      } });
      await client.health({ signal: controller.signal }).catch((error) => console.log(error.name));`;
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: path.resolve(import.meta.dirname, "../.."), timeout: 25_000 });
    const [ended, exited] = stdout.trim().split("\n");
    expect(ended).toBe("AbortError");
    expect(Number(exited?.split(" ")[1])).toBeLessThan(5_000);
    expect(proxy.seen).toHaveLength(1);
  });

  it("backoff doubles per retry up to its ceiling, with jitter between half and all of it", () => {
    const options = { ...retryDefaults, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffMs(n, options, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffMs(n, options, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
  });
});
