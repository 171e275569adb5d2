import { createHash } from "node:crypto";
import * as dagCbor from "@ipld/dag-cbor";
import { CID } from "multiformats/cid";
import { sha256 } from "multiformats/hashes/sha2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isValidTid } from "@atproto/syntax";
import { tidTime } from "../core/records/tid";
import { createPost, replyTo } from "./support/post-bodies";
import { serviceMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.each(serviceMatrix)("posts over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  describe("envelope and request ids", () => {
    it("every JSON response is an envelope: { success: true, data } on success", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "env-1", json: { text: "hi" } });
      expect(res.status).toBe(201);
      expect(res.json).toEqual({ success: true, data: { postId: expect.any(String) } });
    });

    it("failures are { success: false, error: { message, code }, requestId } with requestId equal to X-Request-ID", async () => {
      const res = await svc.get("/api/v1/posts/3kabcdefghijk", { actor: "env-1" });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ success: false, error: { message: expect.any(String), code: "NOT_FOUND" }, requestId: res.headers["x-request-id"] });
    });

    it("a client-sent UUID X-Request-ID is echoed back", async () => {
      const id = "7d1f4c1e-8c57-4a8b-9b0e-2f6f0f0c1a22";
      const res = await svc.get("/health", { headers: { "x-request-id": id } });
      expect(res.headers["x-request-id"]).toBe(id);
    });

    it.runIf(driver === "node")("a client-sent UUID X-Request-ID is echoed on the host's own answers too (no such route)", async () => {
      const id = "0b6a2b8e-3f1c-4c55-a8f0-6a9d1e2f3a4b";
      const res = await svc.get("/api/v1/no-such-route", { headers: { "x-request-id": id } });
      expect(res.status).toBe(404);
      expect(res.headers["x-request-id"]).toBe(id);
      expect(res.json.requestId).toBe(id);
    });

    it("a non-UUID X-Request-ID is replaced with a fresh UUID v4", async () => {
      const res = await svc.get("/health", { headers: { "x-request-id": "not-a-uuid" } });
      expect(res.headers["x-request-id"]).toMatch(UUID_V4);
    });

    it("error responses carry no stack trace", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "env-1", body: "{nope", headers: { "content-type": "application/json" } });
      expect(res.status).toBe(400);
      expect(res.body.toString()).not.toMatch(/at .*\.ts:\d+/);
    });
  });

  describe("authentication", () => {
    const dataRoutes: [string, string][] = [
      ["POST", "/api/v1/posts"],
      ["GET", "/api/v1/posts"],
      ["GET", "/api/v1/posts/3kabcdefghijk"],
      ["GET", "/api/v1/posts/3kabcdefghijk/replies"],
      ["POST", "/api/v1/audio/upload"],
    ];

    it.each(dataRoutes)("a request without a valid service token gets 401 UNAUTHORIZED: %s %s", async (method, path) => {
      for (const token of [null, "wrong-token-0000000000000000000000000000000"]) {
        const res = await svc.call(method, path, { token, actor: "a", json: method === "POST" ? { text: "x" } : undefined });
        expect(res.status).toBe(401);
        expect(res.json.error.code).toBe("UNAUTHORIZED");
      }
    });

    it("a token in another scheme than Bearer is not accepted", async () => {
      const res = await svc.get("/api/v1/posts", { token: null, actor: "a", headers: { authorization: `Basic ${svc.tenants.alpha.token}` } });
      expect(res.status).toBe(401);
    });

    it("a write without X-Svc-Acting-Actor is 401 ACTING_ACTOR_REQUIRED", async () => {
      const res = await svc.post("/api/v1/posts", { json: { text: "x" } });
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe("ACTING_ACTOR_REQUIRED");
    });

    it("a tenant whose custody is not proven gets 503 TENANT_UNAVAILABLE, and other tenants are unaffected", async () => {
      const res = await svc.post("/api/v1/posts", { token: svc.nodid.token, actor: "a", json: { text: "x" } });
      expect(res.status).toBe(503);
      expect(res.json.error.code).toBe("TENANT_UNAVAILABLE");
      expect((await svc.post("/api/v1/posts", { actor: "a", json: { text: "x" } })).status).toBe(201);
    });

    it("the acting actor DID is returned as authorDid", async () => {
      const did = "did:plc:abcdefghijklmnopqrstuvwx";
      const created = await svc.post("/api/v1/posts", { actor: "did-user", actorDid: did, json: { text: "x" } });
      const view = await svc.get(`/api/v1/posts/${created.json.data.postId}`);
      expect(view.json.data.authorDid).toBe(did);
      expect(view.json.data.authorId).toBe("did-user");
    });

    it("a malformed acting actor DID is a 400", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "a", actorDid: "not a did", json: { text: "x" } });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });
  });

  describe("create", () => {
    it("POST /api/v1/posts answers 201 { postId } whose id is a TID", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "c-1", json: { text: "hello" } });
      expect(res.status).toBe(201);
      expect(isValidTid(res.json.data.postId)).toBe(true);
    });

    it("the stored record is exactly { $type, text, createdAt, ... } with server time in ISO 8601 UTC with milliseconds", async () => {
      const before = Date.now();
      const post = await createPost(svc, "c-2", { text: "shape", langs: ["en"] });
      expect(Object.keys(post.record)).toEqual(["$type", "text", "createdAt", "langs"]);
      expect(post.record.$type).toBe("dev.svc.audio.post");
      expect(post.record.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(post.record.createdAt as string)).toBeGreaterThanOrEqual(before - 1000);
    });

    it("createdAt is the instant the post's key stands for, so lists in key order are in createdAt order, even for replies created at once", async () => {
      const prompt = await createPost(svc, "c-order", { text: "many replies" });
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => createPost(svc, `c-order-${i}`, replyTo(prompt))));
      for (const reply of replies) expect(reply.record.createdAt).toBe(tidTime(reply.uri.split("/").at(-1)!).toISOString());
      const listed = (await svc.get(`/api/v1/posts/${prompt.uri.split("/").at(-1)}/replies?limit=50`)).json.data.items as { record: { createdAt: string } }[];
      const times = listed.map((item) => item.record.createdAt);
      expect(times).toHaveLength(20);
      expect(times).toEqual([...times].sort());
    });

    it("uri is at://<tenant app DID>/dev.svc.audio.post/<postId>", async () => {
      const created = await svc.post("/api/v1/posts", { actor: "c-3", json: { text: "u" } });
      const view = await svc.get(`/api/v1/posts/${created.json.data.postId}`);
      expect(view.json.data.uri).toBe(`at://${svc.tenants.alpha.did}/dev.svc.audio.post/${created.json.data.postId}`);
    });

    it("cid is the CIDv1 (dag-cbor, sha2-256, base32) of exactly the record", async () => {
      const post = await createPost(svc, "c-4", { text: "cid me", selfLabels: ["x"] });
      const bytes = dagCbor.encode(post.record);
      const digest = await sha256.digest(bytes);
      expect(post.cid).toBe(CID.createV1(dagCbor.code, digest).toString());
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(Buffer.from(digest.digest).toString("hex"));
    });

    it("a post is a prompt without reply", async () => {
      const post = await createPost(svc, "c-5");
      expect(post.kind).toBe("prompt");
    });

    it.each([
      ["an unknown field", { text: "x", extra: 1 }],
      ["a client-sent originAppId", { text: "x", originAppId: "beta" }],
      ["a client-sent createdAt", { text: "x", createdAt: "2020-01-01T00:00:00.000Z" }],
      ["text over 3000 characters", { text: "a".repeat(3001) }],
      ["more than 3 langs", { text: "x", langs: ["en", "fr", "de", "it"] }],
      ["a lang over 35 characters", { text: "x", langs: ["a".repeat(36)] }],
      ["more than 10 selfLabels", { text: "x", selfLabels: Array.from({ length: 11 }, (_, i) => `l${i}`) }],
      ["a selfLabel over 128 characters", { text: "x", selfLabels: ["a".repeat(129)] }],
      ["neither text nor audio", { text: "   " }],
      ["a missing text", { langs: ["en"] }],
      ["a StrongRef uri over 512 characters", { text: "x", reply: { root: { uri: `at://did:web:x/dev.svc.audio.post/${"a".repeat(520)}`, cid: "bafy" }, parent: { uri: "at://x", cid: "y" } } }],
      ["a StrongRef cid over 128 characters", { text: "x", reply: { root: { uri: "at://did:web:x/dev.svc.audio.post/3kabcdefghijk", cid: "b".repeat(129) }, parent: { uri: "at://did:web:x/dev.svc.audio.post/3kabcdefghijk", cid: "b".repeat(129) } } }],
      ["a non-object body", [1, 2]],
    ])("request validation failure is a 400 VALIDATION_ERROR with issues: %s", async (name, body) => {
      const res = await svc.post("/api/v1/posts", { actor: `v-${name}`, json: body });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
      expect(res.json.error.issues).toEqual(expect.arrayContaining([{ path: expect.any(Array), message: expect.any(String) }]));
    });

    it("text of exactly 3000 characters, 3 langs, 10 selfLabels are accepted", async () => {
      const res = await svc.post("/api/v1/posts", {
        actor: "v-2",
        json: { text: "a".repeat(3000), langs: ["en", "fr", "de"], selfLabels: Array.from({ length: 10 }, (_, i) => `l${i}`) },
      });
      expect(res.status).toBe(201);
    });

    it("a body that is not JSON is a 400", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "v-3", body: "{", headers: { "content-type": "application/json" } });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it("a JSON body over 256 KiB is 413 PAYLOAD_TOO_LARGE", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "v-4", json: { text: "x", pad: "a".repeat(262_144) } });
      expect(res.status).toBe(413);
      expect(res.json.error.code).toBe("PAYLOAD_TOO_LARGE");
    });

    it.runIf(driver === "node")("a JSON body over 256 KiB sent in chunks, with no length declared, is 413 PAYLOAD_TOO_LARGE too", async () => {
      const body = Buffer.from(JSON.stringify({ text: "x", pad: "a".repeat(300_000) }));
      const chunked = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < body.length; at += 16_384) controller.enqueue(new Uint8Array(body.subarray(at, at + 16_384)));
          controller.close();
        },
      });
      const res = await fetch(`${svc.baseUrl}/api/v1/posts`, {
        method: "POST",
        headers: { authorization: `Bearer ${svc.tenants.alpha.token}`, "x-svc-acting-actor": "v-4c", "content-type": "application/json" },
        body: chunked,
        duplex: "half",
      } as RequestInit);
      expect(res.headers.get("content-length")).not.toBe("0");
      expect(res.status).toBe(413);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("PAYLOAD_TOO_LARGE");
    });

    it("a create's processing needs an audio embed (400 without one)", async () => {
      const res = await svc.post("/api/v1/posts", { actor: "v-5", json: { text: "x", processing: { transcribe: true } } });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it("nothing is stored when a create fails", async () => {
      const actor = "v-6";
      await svc.post("/api/v1/posts", { actor, json: { text: "x", bogus: true } });
      const list = await svc.get("/api/v1/posts", { actor });
      expect(list.json.data.items).toEqual([]);
    });
  });

  describe("reply gating", () => {
    it("replying to a prompt is open to any authenticated viewer", async () => {
      const prompt = await createPost(svc, "g-author");
      const res = await svc.post("/api/v1/posts", { actor: "g-stranger", json: replyTo(prompt) });
      expect(res.status).toBe(201);
    });

    it("replying to a reply is restricted to the two participants of that branch; anyone else gets 403 NOT_A_PARTICIPANT", async () => {
      const prompt = await createPost(svc, "g2-author");
      const opener = await createPost(svc, "g2-responder", replyTo(prompt));
      const outsider = await svc.post("/api/v1/posts", { actor: "g2-outsider", json: replyTo(opener, prompt) });
      expect(outsider.status).toBe(403);
      expect(outsider.json.error.code).toBe("NOT_A_PARTICIPANT");
      const byAuthor = await createPost(svc, "g2-author", replyTo(opener, prompt));
      const byResponder = await svc.post("/api/v1/posts", { actor: "g2-responder", json: replyTo(byAuthor as never, prompt) });
      expect(byResponder.status).toBe(201);
      const deeperOutsider = await svc.post("/api/v1/posts", { actor: "g2-outsider", json: replyTo(byAuthor as never, prompt) });
      expect(deeperOutsider.status).toBe(403);
    });

    it("the gate is reported on read through viewer.canReply and viewer.replyDisabledReason", async () => {
      const prompt = await createPost(svc, "g3-author");
      const opener = await createPost(svc, "g3-responder", replyTo(prompt));
      const id = opener.uri.split("/").pop();
      const asOutsider = await svc.get(`/api/v1/posts/${id}`, { actor: "g3-outsider" });
      expect(asOutsider.json.data.viewer).toEqual({ isAuthor: false, canReply: false, replyDisabledReason: "not_a_participant" });
      const asAuthor = await svc.get(`/api/v1/posts/${id}`, { actor: "g3-author" });
      expect(asAuthor.json.data.viewer).toEqual({ isAuthor: false, canReply: true });
      const asResponder = await svc.get(`/api/v1/posts/${id}`, { actor: "g3-responder" });
      expect(asResponder.json.data.viewer).toEqual({ isAuthor: true, canReply: true });
      const promptAsStranger = await svc.get(`/api/v1/posts/${prompt.uri.split("/").pop()}`, { actor: "g3-outsider" });
      expect(promptAsStranger.json.data.viewer).toEqual({ isAuthor: false, canReply: true });
    });

    it("a reply's kind is reply", async () => {
      const prompt = await createPost(svc, "g4-author");
      const reply = await createPost(svc, "g4-r", replyTo(prompt));
      expect(reply.kind).toBe("reply");
    });

    it("reply.parent must name a current post of the same tenant: an unknown parent or a stale cid is a 400", async () => {
      const prompt = await createPost(svc, "g5-author");
      const missing = { uri: prompt.uri.replace(/[^/]+$/, "3kzzzzzzzzzzz"), cid: prompt.cid };
      expect((await svc.post("/api/v1/posts", { actor: "g5", json: replyTo(missing, missing) })).status).toBe(400);
      const other = await createPost(svc, "g5-author", { text: "other" });
      const stale = { uri: prompt.uri, cid: other.cid };
      const res = await svc.post("/api/v1/posts", { actor: "g5", json: replyTo(stale, stale) });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it("reply.root must be the parent's thread root, else 400", async () => {
      const prompt = await createPost(svc, "g6-author");
      const opener = await createPost(svc, "g6-r", replyTo(prompt));
      const unrelated = await createPost(svc, "g6-author", { text: "unrelated" });
      expect((await svc.post("/api/v1/posts", { actor: "g6-author", json: replyTo(opener, unrelated) })).status).toBe(400);
      expect((await svc.post("/api/v1/posts", { actor: "g6-author", json: replyTo(opener, opener) })).status).toBe(400);
      expect((await svc.post("/api/v1/posts", { actor: "g6-author", json: replyTo(prompt, unrelated) })).status).toBe(400);
    });

    it("a reply to another tenant's post is a 400, and nothing of the other tenant is revealed", async () => {
      const betaPrompt = await createPost(svc, "g7-author", { text: "beta" }, svc.tenants.beta.token);
      const res = await svc.post("/api/v1/posts", { actor: "g7", json: replyTo(betaPrompt) });
      expect(res.status).toBe(400);
    });
  });

  describe("reads and projections", () => {
    it("GET /api/v1/posts/{postId} without the acting actor returns the anonymous, viewer-less projection", async () => {
      const post = await createPost(svc, "r-1");
      const res = await svc.get(`/api/v1/posts/${post.uri.split("/").pop()}`);
      expect(res.status).toBe(200);
      expect(res.json.data).not.toHaveProperty("viewer");
      expect(res.json.data.record).toEqual(post.record);
    });

    it("no hydrated author profile is ever returned, only authorId", async () => {
      const post = await createPost(svc, "r-2");
      expect(Object.keys(post).sort()).toEqual(["authorId", "cid", "kind", "record", "uri", "viewer"]);
    });

    it("an unknown post is 404 NOT_FOUND, and so is a malformed id", async () => {
      for (const id of ["3kzzzzzzzzzzz", "nope", "..%2F..%2Fetc"]) {
        const res = await svc.get(`/api/v1/posts/${id}`, { actor: "r-3" });
        expect(res.status).toBe(404);
        expect(res.json.error.code).toBe("NOT_FOUND");
      }
    });

    it("another tenant's post is unknown (404): tenant isolation", async () => {
      const post = await createPost(svc, "r-4");
      const id = post.uri.split("/").pop();
      const res = await svc.get(`/api/v1/posts/${id}`, { token: svc.tenants.beta.token, actor: "r-4" });
      expect(res.status).toBe(404);
      expect((await svc.get(`/api/v1/posts/${id}/replies`, { token: svc.tenants.beta.token })).status).toBe(404);
    });

    it("GET /api/v1/posts returns the viewer's own posts, newest first, optionally filtered by kind", async () => {
      const actor = "l-1";
      const prompt = await createPost(svc, actor, { text: "p1" });
      const other = await createPost(svc, "l-1-other");
      const reply = await createPost(svc, actor, replyTo(other));
      const all = await svc.get("/api/v1/posts", { actor });
      expect(all.json.data.items.map((p: { uri: string }) => p.uri)).toEqual([reply.uri, prompt.uri]);
      const prompts = await svc.get("/api/v1/posts?kind=prompt", { actor });
      expect(prompts.json.data.items.map((p: { uri: string }) => p.uri)).toEqual([prompt.uri]);
      const replies = await svc.get("/api/v1/posts?kind=reply", { actor });
      expect(replies.json.data.items.map((p: { uri: string }) => p.uri)).toEqual([reply.uri]);
    });

    it("GET /api/v1/posts without rootAuthor needs the acting actor (401 ACTING_ACTOR_REQUIRED)", async () => {
      const res = await svc.get("/api/v1/posts");
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe("ACTING_ACTOR_REQUIRED");
    });

    it("with rootAuthor it returns the replies whose thread root was authored by that id, viewer-less too", async () => {
      const root = "ra-author";
      const prompt = await createPost(svc, root);
      const r1 = await createPost(svc, "ra-1", replyTo(prompt));
      const r2 = await createPost(svc, root, replyTo(r1, prompt));
      await createPost(svc, "ra-unrelated");
      const res = await svc.get(`/api/v1/posts?rootAuthor=${root}`);
      expect(res.status).toBe(200);
      expect(res.json.data.items.map((p: { uri: string }) => p.uri)).toEqual([r2.uri, r1.uri]);
      expect(res.json.data.items[0]).not.toHaveProperty("viewer");
      const withViewer = await svc.get(`/api/v1/posts?rootAuthor=${root}`, { actor: "ra-1" });
      expect(withViewer.json.data.items[1].viewer).toEqual({ isAuthor: true, canReply: true });
    });

    it("nextCursor is the id of the last item when more items exist and null on the last page, never an extra empty page", async () => {
      const actor = "pg-1";
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.unshift((await createPost(svc, actor, { text: `p${i}` })).uri.split("/").pop()!);
      const first = await svc.get("/api/v1/posts?limit=2", { actor });
      expect(first.json.data.items.map((p: { uri: string }) => p.uri.split("/").pop())).toEqual(ids.slice(0, 2));
      expect(first.json.data.nextCursor).toBe(ids[1]);
      const second = await svc.get(`/api/v1/posts?limit=2&cursor=${first.json.data.nextCursor}`, { actor });
      expect(second.json.data.nextCursor).toBe(ids[3]);
      const last = await svc.get(`/api/v1/posts?limit=2&cursor=${second.json.data.nextCursor}`, { actor });
      expect(last.json.data.items).toHaveLength(1);
      expect(last.json.data.nextCursor).toBeNull();
      const exact = await svc.get("/api/v1/posts?limit=5", { actor });
      expect(exact.json.data.items).toHaveLength(5);
      expect(exact.json.data.nextCursor).toBeNull();
    });

    it("limit defaults to 20: of 21 items the first page holds 20, and nextCursor points after the 20th", async () => {
      // 21 replies by 21 actors under one root, listed by rootAuthor: one actor could not write 21 posts (10 per 15 min).
      const prompt = await createPost(svc, "pg-2-root");
      const ids: string[] = [];
      for (let i = 0; i < 21; i++) {
        const res = await svc.post("/api/v1/posts", { actor: `pg-2-${i}`, json: replyTo(prompt) });
        expect(res.status).toBe(201);
        ids.unshift(res.json.data.postId);
      }
      const first = await svc.get("/api/v1/posts?rootAuthor=pg-2-root");
      expect(first.json.data.items.map((p: { uri: string }) => p.uri.split("/").pop())).toEqual(ids.slice(0, 20));
      expect(first.json.data.nextCursor).toBe(ids[19]);
      const rest = await svc.get(`/api/v1/posts?rootAuthor=pg-2-root&cursor=${first.json.data.nextCursor}`);
      expect(rest.json.data.items.map((p: { uri: string }) => p.uri.split("/").pop())).toEqual([ids[20]]);
      expect(rest.json.data.nextCursor).toBeNull();
    });

    it.each(["0", "101", "-1", "abc", "1.5"])("limit out of 1 to 100 is a 400: limit=%s", async (limit) => {
      const res = await svc.get(`/api/v1/posts?limit=${limit}`, { actor: "pg-3" });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it("an unknown cursor, or one from another tenant or another list, is a 400", async () => {
      const mine = await createPost(svc, "cur-1");
      const theirs = await createPost(svc, "cur-2");
      const betaPost = await createPost(svc, "cur-1", { text: "beta" }, svc.tenants.beta.token);
      for (const cursor of ["3kzzzzzzzzzzz", theirs.uri.split("/").pop(), betaPost.uri.split("/").pop(), "garbage"]) {
        const res = await svc.get(`/api/v1/posts?cursor=${cursor}`, { actor: "cur-1" });
        expect(res.status).toBe(400);
      }
      expect((await svc.get(`/api/v1/posts?cursor=${mine.uri.split("/").pop()}`, { actor: "cur-1" })).status).toBe(200);
    });

    it("an unknown query parameter is a 400", async () => {
      const res = await svc.get("/api/v1/posts?viewerOverride=1", { actor: "q-1" });
      expect(res.status).toBe(400);
    });

    it("replies are the post's direct replies, oldest first, paginated", async () => {
      const prompt = await createPost(svc, "th-author");
      const a = await createPost(svc, "th-a", replyTo(prompt));
      const b = await createPost(svc, "th-b", replyTo(prompt));
      await createPost(svc, "th-author", replyTo(a, prompt)); // a grandchild is not a direct reply
      const id = prompt.uri.split("/").pop();
      const res = await svc.get(`/api/v1/posts/${id}/replies`);
      expect(res.json.data.items.map((p: { uri: string }) => p.uri)).toEqual([a.uri, b.uri]);
      expect(res.json.data.nextCursor).toBeNull();
      const page = await svc.get(`/api/v1/posts/${id}/replies?limit=1`, { actor: "th-a" });
      expect(page.json.data.nextCursor).toBe(a.uri.split("/").pop());
      expect(page.json.data.items[0].viewer.isAuthor).toBe(true);
    });

    it("replies of an unknown post are 404 NOT_FOUND", async () => {
      const res = await svc.get("/api/v1/posts/3kzzzzzzzzzzz/replies");
      expect(res.status).toBe(404);
    });
  });

  describe("health, description and reference", () => {
    it("GET /health reports ok, sha, deployedAt, backend, records and blobs in the envelope", async () => {
      const res = await svc.get("/health", { token: null });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        success: true,
        data: { ok: true, sha: null, deployedAt: null, backend: "pglite", records: "present", blobs: "empty" },
      });
    });

    it("GET /openapi.json is an OpenAPI 3.1 description of every public route, system routes excluded", async () => {
      const res = await svc.get("/openapi.json", { token: null });
      expect(res.json.openapi).toBe("3.1.0");
      expect(Object.keys(res.json.paths)).toEqual(
        expect.arrayContaining(["/api/v1/posts", "/api/v1/posts/{postId}", "/api/v1/posts/{postId}/replies", "/health", "/api/v1/audio", "/api/v1/audio/upload"]),
      );
      expect(Object.keys(res.json.paths).some((p) => p.startsWith("/api/v1/system"))).toBe(false);
      expect(res.json.components.schemas.Error.properties.error.properties.code.enum).toContain("NOT_A_PARTICIPANT");
    });

    it("GET /api/reference serves a page whose script is served by this service, not a CDN", async () => {
      const page = await svc.get("/api/reference", { token: null });
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toMatch(/text\/html/);
      const src = page.body.toString().match(/<script src="([^"]+)"/)?.[1];
      // Relative to the page, so it also loads behind a path prefix (test/reference-page.test.ts).
      const scriptPath = new URL(src!, `${svc.baseUrl}/api/reference`).pathname;
      expect(scriptPath).toBe("/api/reference/standalone.js");
      const script = await svc.get(scriptPath, { token: null });
      expect(script.status).toBe(200);
      expect(script.body.length).toBeGreaterThan(100_000);
    });
  });
});
