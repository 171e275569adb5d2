import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { slowedSql } from "../../test/support/slowed-sql";
import { startTestService, type TestService } from "../../test/support/test-service";
import { SvcError, type SvcClient } from "../src/index";
import { freshActor, recordingClient } from "./support/client-harness";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy";

describe("a create answered 503 at the service's request deadline, through the client", () => {
  let svc: TestService;
  /** Set to hold the next post insert past the deadline, as a slow database would. */
  let slowInsert = false;
  /** Called once the held insert has returned: the late write is over. */
  let lateInsertSettled = () => {};
  // A deadline every request not held meets even on a loaded machine; the hold starts after the deadline's clock and
  // ends a second past it, so the deadline always comes first.
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      env: { SVC_REQUEST_DEADLINE_MS: "1500" },
      sql: slowedSql(
        backends[0]!.open,
        (text) => (slowInsert && text.includes("INSERT INTO posts") ? ((slowInsert = false), 2_500) : undefined),
        () => lateInsertSettled(),
      ),
    });
  });
  afterAll(() => svc?.close());

  it("is retried under its Idempotency-Key and succeeds with exactly one post, not failed with the 409 of a key still held", async () => {
    const { client, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const actor = freshActor("deadline");
    const lateInsert = new Promise<void>((resolve) => (lateInsertSettled = resolve));
    slowInsert = true;
    const { postId } = await client.as(actor).createPost({ text: "once" });
    expect(requests.filter((r) => r.method === "POST")).toHaveLength(2);
    // The first attempt's write, still running behind its 503, stores nothing once the retry holds the key.
    await lateInsert;
    const page = await client.as(actor).listPosts();
    expect(page.items.map((p) => p.uri.split("/").pop())).toEqual([postId]);
  });
});

describe("a create whose connection drops while the service still runs it, through the client", () => {
  let svc: TestService;
  let proxy: FaultProxy;
  /** Set to hold the next post insert, inside the service's deadline, as a slow database (an Aurora resume) would. */
  let slowInsert = false;
  const insertMs = 1_000;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      sql: slowedSql(backends[0]!.open, (text) => (slowInsert && text.includes("INSERT INTO posts") ? ((slowInsert = false), insertMs) : undefined)),
    });
    proxy = await startFaultProxy(svc.baseUrl);
  });
  afterAll(async () => {
    await proxy?.close();
    await svc?.close();
  });
  const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const postIdsOf = async (client: SvcClient, actor: string) => (await client.as(actor).listPosts()).items.map((p) => p.uri.split("/").pop());

  it("retries the 409 IDEMPOTENCY_IN_PROGRESS that answers its retry (its own first attempt still running) with backoff, and resolves with the one post", async () => {
    // Backoff steps of 100 ms doubling to 1 s: the fifth retry comes after the held insert at the earliest.
    const delays: number[] = [];
    const sleep = (ms: number) => (delays.push(ms), wait(ms));
    const { client } = recordingClient(proxy.url, svc.tenants.alpha.token, { maxRetries: 5, retry: { baseDelayMs: 100, maxDelayMs: 1_000 }, sleep });
    const actor = freshActor("dropped");
    proxy.seen.length = 0;
    proxy.inject({ method: "POST", path: "/api/v1/posts" }, { kind: "drop", afterMs: 50 });
    slowInsert = true;
    const { postId } = await client.as(actor).createPost({ text: "once" });
    const posts = proxy.to("POST", "/api/v1/posts");
    expect(posts.filter((p) => p.answered === 409).length).toBeGreaterThan(0);
    expect(new Set(posts.map((p) => p.headers["idempotency-key"])).size).toBe(1);
    // The usual backoff: each wait between half and all of its step, 100 ms doubling up to the 1 s cap.
    expect(delays).toHaveLength(posts.length - 1);
    const stepOf = (retry: number) => Math.min(100 * 2 ** retry, 1_000);
    delays.forEach((ms, retry) => {
      expect(ms).toBeGreaterThanOrEqual(stepOf(retry) / 2);
      expect(ms).toBeLessThanOrEqual(stepOf(retry));
    });
    await wait(200);
    expect(await postIdsOf(client, actor)).toEqual([postId]);
  });

  it("retries the 409 IDEMPOTENCY_IN_PROGRESS that follows a gateway's 504 (the service ran on behind it), and resolves with the one post", async () => {
    const { client } = recordingClient(proxy.url, svc.tenants.alpha.token, { maxRetries: 5, retry: { baseDelayMs: 100, maxDelayMs: 1_000 }, sleep: wait });
    const actor = freshActor("gateway");
    proxy.seen.length = 0;
    proxy.inject({ method: "POST", path: "/api/v1/posts" }, { kind: "gateway-timeout", afterMs: 50 });
    slowInsert = true;
    const { postId } = await client.as(actor).createPost({ text: "once" });
    const posts = proxy.to("POST", "/api/v1/posts");
    expect(posts.filter((p) => p.answered === 409).length).toBeGreaterThan(0);
    await wait(200);
    expect(await postIdsOf(client, actor)).toEqual([postId]);
  });

  it("when its retries run out first, the 409 carries the call's idempotencyKey, and calling again with it answers the same post", async () => {
    const { client } = recordingClient(proxy.url, svc.tenants.alpha.token, { maxRetries: 1, retry: { baseDelayMs: 100, maxDelayMs: 100 }, sleep: wait });
    const actor = freshActor("replay");
    proxy.seen.length = 0;
    proxy.inject({ method: "POST", path: "/api/v1/posts" }, { kind: "drop", afterMs: 50 });
    slowInsert = true;
    const error = await client.as(actor).createPost({ text: "once" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ status: 409, code: "IDEMPOTENCY_IN_PROGRESS" });
    const key = (error as SvcError).idempotencyKey;
    expect(key).toBe(proxy.to("POST", "/api/v1/posts")[0]!.headers["idempotency-key"]);
    await wait(insertMs + 200);
    const { postId } = await client.as(actor).createPost({ text: "once" }, { idempotencyKey: key });
    expect(await postIdsOf(client, actor)).toEqual([postId]);
  });

  it("a 409 IDEMPOTENCY_IN_PROGRESS on a call's first attempt (the caller's key held by another of its calls) is surfaced at once, with that key", async () => {
    const { client, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token, { sleep: wait });
    const author = client.as(freshActor("twice"));
    slowInsert = true;
    const first = author.createPost({ text: "mine" }, { idempotencyKey: "held-key-1" });
    await wait(200);
    const second = await author.createPost({ text: "mine" }, { idempotencyKey: "held-key-1" }).catch((e: unknown) => e);
    expect(second).toMatchObject({ status: 409, code: "IDEMPOTENCY_IN_PROGRESS", idempotencyKey: "held-key-1" });
    expect(requests.filter((r) => r.method === "POST")).toHaveLength(2);
    await expect(first).resolves.toMatchObject({ postId: expect.any(String) });
  });
});
