import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audioFixture } from "../../test/support/audio-fixtures";
import type { TestService } from "../../test/support/test-service";
import { createClient, SvcError, type SvcClient } from "../src/index";
import { freshActor, recordingClient, startClientService } from "./support/client-harness";

describe("the client against the real Node host", () => {
  let svc: TestService;
  let client: SvcClient;
  beforeAll(async () => {
    svc = await startClientService();
    client = createClient({ baseUrl: svc.baseUrl, token: svc.tenants.alpha.token });
  });
  afterAll(() => svc?.close());

  const prompt = (who: SvcClient, text = "a prompt") => who.createPost({ text });

  it("has a method named after every public operationId of the description", () => {
    const description = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../functions/openapi.json"), "utf8"));
    const operationIds = Object.values(description.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((op) => op.operationId));
    // Documentation pages, not operations.
    const notMethods = ["openapi", "reference", "referenceScript"];
    for (const id of operationIds.filter((id) => !notMethods.includes(id))) expect(typeof (client as unknown as Record<string, unknown>)[id], id).toBe("function");
  });

  it("creates a post as the acting actor with its DID, reads it back, and requests stages with patchPost", async () => {
    const alice = client.as(freshActor("alice"), { did: "did:plc:alice0000000000000000" });
    const blob = await alice.uploadAudio((await audioFixture("audio/wav")).bytes, { mimeType: "audio/wav" });
    const { postId } = await alice.createPost({ text: "hello", embed: { $type: "dev.svc.embed.audio", audio: blob } });
    const view = await alice.getPost(postId);
    expect(view).toMatchObject({ kind: "prompt", authorDid: "did:plc:alice0000000000000000", record: { text: "hello" }, viewer: { isAuthor: true, canReply: true } });
    expect(view.embed?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/audio\?/);
    const patched = await alice.patchPost(postId, { processing: { transcribe: true, waveform: true } });
    expect(patched.processing).toMatchObject({ transcribe: { status: "ready" }, waveform: { status: "ready" } });
    expect((await alice.getPost(postId)).embed?.transcript?.text).toBeTruthy();
  });

  it("a client with no acting actor reads viewer-less", async () => {
    const { postId } = await prompt(client.as(freshActor()));
    const view = await client.getPost(postId);
    expect(view.viewer).toBeUndefined();
  });

  it("sends the actor id as UTF-8, as the service stores it", async () => {
    const actor = `zoë-${freshActor()}`;
    const { postId } = await prompt(client.as(actor));
    expect((await client.getPost(postId)).authorId).toBe(actor);
  });

  it("awaiting a list gives one page { items, nextCursor }; iterating it walks every page, newest first", async () => {
    const bob = client.as(freshActor("bob"));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await prompt(bob, `p${i}`)).postId);
    const page = await bob.listPosts({ kind: "prompt", limit: 2 });
    expect(page.items.map((p) => p.uri.split("/").pop())).toEqual([ids[4], ids[3]]);
    expect(page.nextCursor).toBe(ids[3]);
    const all: string[] = [];
    for await (const post of bob.listPosts({ kind: "prompt", limit: 2 })) all.push(post.uri.split("/").pop()!);
    expect(all).toEqual([...ids].reverse());
    const pages: number[] = [];
    for await (const p of bob.listPosts({ kind: "prompt", limit: 2 }).pages()) pages.push(p.items.length);
    expect(pages).toEqual([2, 2, 1]);
  });

  it("listReplies walks a thread's direct replies oldest first, viewer-less too", async () => {
    const author = client.as(freshActor("author"));
    const { postId } = await prompt(author);
    const root = await author.getPost(postId);
    const replies: string[] = [];
    for (let i = 0; i < 3; i++) {
      const replier = client.as(freshActor("replier"));
      replies.push((await replier.createPost({ text: `r${i}`, reply: { root: { uri: root.uri, cid: root.cid }, parent: { uri: root.uri, cid: root.cid } } })).postId);
    }
    const walked: string[] = [];
    for await (const reply of client.listReplies(postId, { limit: 1 })) walked.push(reply.uri.split("/").pop()!);
    expect(walked).toEqual(replies);
  });

  it("an error envelope becomes an SvcError with status, code, message, requestId and issues", async () => {
    const who = client.as(freshActor());
    const error = await who.createPost({ text: "", langs: ["not a language tag at all"] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ status: 400, code: "VALIDATION_ERROR", requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect((error as SvcError).message).toBeTruthy();
    expect((error as SvcError).issues?.length).toBeGreaterThan(0);
    expect((error as SvcError).issues![0]).toMatchObject({ path: expect.any(Array), message: expect.any(String) });
    await expect(client.getPost("3kabcdefghijk")).rejects.toMatchObject({ status: 404, code: "NOT_FOUND" });
  });

  it("4xx answers other than 408 and 429 are never retried", async () => {
    const { client: counted, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const who = counted.as(freshActor());
    await expect(who.createPost({ text: "" })).rejects.toMatchObject({ status: 400 });
    await expect(who.getPost("3kabcdefghijk")).rejects.toMatchObject({ status: 404 });
    const { postId } = await prompt(who);
    await expect(counted.as(freshActor()).patchPost(postId, { processing: { trim: true } })).rejects.toMatchObject({ status: 403, code: "FORBIDDEN" });
    expect(requests.map((r) => r.method)).toEqual(["POST", "GET", "POST", "PATCH"]);
    const stranger = recordingClient(svc.baseUrl, "a-wrong-token-of-enough-length-0000000000");
    await expect(stranger.client.getPost("3kabcdefghijk")).rejects.toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    expect(stranger.requests).toHaveLength(1);
  });

  it("an actor id no header can carry (a line break, NUL) is refused before sending: a 400 VALIDATION_ERROR with no request id, never retried", async () => {
    const { client: counted, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    for (const actor of ["line\nbreak", "nul\u0000x"]) {
      const error = await counted.as(actor).createPost({ text: "x" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SvcError);
      expect(error).toMatchObject({ status: 400, code: "VALIDATION_ERROR", requestId: null, issues: [{ path: ["headers", "X-Svc-Acting-Actor"] }] });
    }
    await expect(counted.as("alice", { did: "did:plc:a\rb" }).getPost("3kabcdefghijk")).rejects.toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    expect(requests).toHaveLength(0);
  });

  it("a 429 whose Retry-After passes the cap fails at once, with retryAfter in seconds", async () => {
    const { client: counted, requests, delays } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const carol = counted.as(freshActor("carol"));
    for (let i = 0; i < 10; i++) await prompt(carol);
    const error = (await prompt(carol).catch((e: unknown) => e)) as SvcError;
    expect(error).toMatchObject({ status: 429, code: "RATE_LIMITED" });
    expect(error.retryAfter).toBeGreaterThan(60);
    expect(error.retryAfter).toBeLessThanOrEqual(900);
    expect(requests).toHaveLength(11);
    expect(delays).toEqual([]);
  });

  it("getAudio plays a view's signed embed.url without the token; a range answers 206; a bad signature is an SvcError 403", async () => {
    const { client: counted, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const who = counted.as(freshActor());
    const wav = (await audioFixture("audio/wav")).bytes;
    const { postId } = await who.createPost({ text: "play me", embed: { $type: "dev.svc.embed.audio", audio: await who.uploadAudio(wav, { mimeType: "audio/wav" }) } });
    const { embed } = await who.getPost(postId);
    const whole = await who.getAudio(embed!.url);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(wav)).toBe(true);
    expect(requests.at(-1)!.headers.get("authorization")).toBeNull();
    const part = await who.getAudio(embed!.url, { range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect((await part.arrayBuffer()).byteLength).toBe(100);
    const head = await who.getAudioHead(embed!.url);
    expect(head.headers.get("content-length")).toBe(String(wav.length));
    const forged = embed!.url.replace(/sig=[^&]+/, "sig=AAAA");
    await expect(who.getAudio(forged)).rejects.toMatchObject({ status: 403, code: "FORBIDDEN" });
  });

  it("health answers the service's health object", async () => {
    expect(await client.health()).toMatchObject({ ok: true, backend: "pglite" });
  });
});
