import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost, replyTo } from "./support/post-bodies";
import { serviceMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";
import type { SqlBackend, SqlValue } from "../core/sql/port";
import { backends, dataApiBackends } from "./support/databases";
import { audioPost, noiseWav, seedAudio } from "./support/seeded-audio";
import { audioFixture } from "./support/audio-fixtures";
import { multipartBody } from "./support/multipart-body";

describe.each(serviceMatrix)("Idempotency-Key on POST /api/v1/posts over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  const create = (actor: string, key: string, json: unknown, token?: string) =>
    svc.post("/api/v1/posts", { actor, json, token, headers: { "idempotency-key": key } });

  const ownPosts = async (actor: string) => (await svc.get("/api/v1/posts", { actor })).json.data.items as unknown[];

  it("a successful result is cached: an identical retry replays the original status and body with Idempotent-Replayed: true", async () => {
    const first = await create("i-1", "key-1", { text: "once" });
    const retry = await create("i-1", "key-1", { text: "once" });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body.toString()).toBe(first.body.toString());
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(await ownPosts("i-1")).toHaveLength(1);
  });

  it("a replay of a stored result is answered before the write limiter and costs no write", async () => {
    const first = await create("i-limit", "key-limit", { text: "kept" });
    expect(first.status).toBe(201);
    for (let i = 0; i < 9; i++) expect((await svc.post("/api/v1/posts", { actor: "i-limit", json: { text: `burst ${i}` } })).status).toBe(201);
    const limited = await svc.post("/api/v1/posts", { actor: "i-limit", json: { text: "one too many" } });
    expect(limited.status).toBe(429);

    const retry = await create("i-limit", "key-limit", { text: "kept" });
    expect(retry.status).toBe(201);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(retry.headers["retry-after"]).toBeUndefined();
    // It took a read instead (idempotency-replay-limits.test.ts).
    expect(retry.headers.ratelimit).toMatch(/^"actor";r=59;t=\d+$/);
    expect(retry.body.toString()).toBe(first.body.toString());
    expect(await ownPosts("i-limit")).toHaveLength(10);

    // A new key is still a write, and still refused; its claim is released, so the same key works once allowed.
    const fresh = await create("i-limit", "key-limit-2", { text: "new" });
    expect(fresh.status).toBe(429);
    expect((await create("i-limit", "key-limit-2", { text: "another body" })).status).toBe(429);
  });

  it("a replay, a success, carries RateLimit and RateLimit-Policy of the read limits it took, and takes no write", async () => {
    const first = await create("i-headers", "key-headers", { text: "counted once" });
    expect(first.headers.ratelimit).toBe('"actor";r=9;t=900');
    expect(first.headers["ratelimit-policy"]).toMatch(/^"actor";q=10;w=900, "aggregate-ip";q=\d+;w=\d+$/);
    const replay = await create("i-headers", "key-headers", { text: "counted once" });
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.headers["ratelimit-policy"]).toMatch(/^"actor";q=60;w=60, "aggregate-ip";q=\d+;w=60$/);
    expect(replay.headers.ratelimit).toMatch(/^"actor";r=59;t=60$/);
    expect(replay.headers["retry-after"]).toBeUndefined();
    // The replay took no write: the next write sees 8 left.
    expect((await svc.post("/api/v1/posts", { actor: "i-headers", json: { text: "next" } })).headers.ratelimit).toMatch(/^"actor";r=8;/);
  });

  it("the same key with a different body is 422 IDEMPOTENCY_KEY_REUSED", async () => {
    await create("i-2", "key-2", { text: "first" });
    const res = await create("i-2", "key-2", { text: "second" });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(await ownPosts("i-2")).toHaveLength(1);
  });

  it("a failed validation or reference check releases the claim at once, so the client can fix and retry", async () => {
    const prompt = await createPost(svc, "i-3-author");
    const badRef = { ...replyTo(prompt), reply: { ...replyTo(prompt).reply, parent: { uri: prompt.uri, cid: "bafyreib2rxk3rh6kzwq" } } };
    const failed = await create("i-3", "key-3", badRef);
    expect(failed.status).toBe(400);
    const fixed = await create("i-3", "key-3", replyTo(prompt));
    expect(fixed.status).toBe(201);
    expect(fixed.headers["idempotent-replayed"]).toBeUndefined();
  });

  it("a reply refused by the gate (403) releases the claim too", async () => {
    const prompt = await createPost(svc, "i-4-author");
    const opener = await createPost(svc, "i-4-opener", replyTo(prompt));
    expect((await create("i-4-outsider", "key-4", replyTo(opener, prompt))).status).toBe(403);
    expect((await create("i-4-outsider", "key-4", replyTo(prompt))).status).toBe(201);
  });

  it("keys are scoped per tenant and per actor", async () => {
    const a = await create("i-5", "shared-key", { text: "same" });
    const otherActor = await create("i-5-other", "shared-key", { text: "same" });
    const otherTenant = await create("i-5", "shared-key", { text: "same" }, svc.tenants.beta.token);
    expect([a.status, otherActor.status, otherTenant.status]).toEqual([201, 201, 201]);
    expect(new Set([a.json.data.postId, otherActor.json.data.postId, otherTenant.json.data.postId]).size).toBe(3);
  });

  it("50 parallel creates with one Idempotency-Key make exactly one post", async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => create("i-6", "key-race", { text: "race" })));
    // Each answer as status and code (or "replayed"), so a failure says what the 50 got.
    const seen = results.map((r) => `${r.status} ${r.json?.error?.code ?? (r.headers["idempotent-replayed"] ? "replayed" : "")}`);
    const created = results.filter((r) => r.status === 201 && r.headers["idempotent-replayed"] === undefined);
    expect(created, seen.join(", ")).toHaveLength(1);
    for (const r of results) {
      if (r.status === 201) expect(r.json.data.postId).toBe(created[0]!.json.data.postId);
      else expect([409, 429]).toContain(r.status);
    }
    const conflicts = results.filter((r) => r.status === 409);
    for (const r of conflicts) expect(r.json.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    expect(await ownPosts("i-6")).toHaveLength(1);
  });

  it.each([["", "empty"], ["a".repeat(256), "too long"], ["caf\u00e9", "non-ASCII"]])(
    "an Idempotency-Key that is not 1 to 255 printable ASCII characters is a 400 (%s: %s)",
    async (key) => {
      const res = await svc.post("/api/v1/posts", { actor: "i-7", json: { text: "k" }, headers: { "idempotency-key": key } });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    },
  );

  it.each([["mykey\u00a0", "NBSP"], ["\ufeffmykey", "BOM"], ["mykey\u2028", "line separator"], ["\u3000mykey", "ideographic space"]])(
    "only space and tab are trimmed from an Idempotency-Key: Unicode whitespace around it is a 400, not the key inside's replay (%j: %s)",
    async (key) => {
      expect((await create("i-ws", "mykey", { text: "ws" })).status).toBe(201);
      // Over HTTP the header travels as its UTF-8 bytes (which fetch takes as latin1); in an event, as text.
      const sent = driver === "node" ? Buffer.from(key, "utf8").toString("latin1") : key;
      const res = await create("i-ws", sent, { text: "ws" });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    },
  );
});

describe.each(backends)("a create answered 503 at its request deadline while its write still runs, on $name", ({ open }) => {
  let svc: TestService;
  /** How the next post insert is slowed: held before it is sent, or sent and held uncommitted (its lock taken). */
  let slow: "before" | "committing" | undefined;
  /** Called once the slowed insert has returned (committed, in "committing"): the late write is over. */
  let lateInsertSettled = () => {};
  const lateInsert = () => new Promise<void>((resolve) => (lateInsertSettled = resolve));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  // A deadline every request not slowed meets even on a loaded machine; the hold starts after the deadline's clock
  // and ends a second past it, so the deadline always comes first.
  const holdMs = 2_500;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      env: { SVC_REQUEST_DEADLINE_MS: "1500" },
      sql: async () => {
        const sql = await open();
        const slowed = async <Row,>(mode: "before" | "committing", text: string, params?: readonly SqlValue[]): Promise<Row[]> => {
          if (mode === "before") {
            await sleep(holdMs);
            return sql.query<Row>(text, params);
          }
          return sql.transaction(async (tx) => {
            const rows = await tx.query<Row>(text, params);
            await sleep(holdMs);
            return rows;
          });
        };
        const query = async <Row,>(text: string, params?: readonly SqlValue[]): Promise<Row[]> => {
          const mode = text.includes("INSERT INTO posts") ? slow : undefined;
          if (!mode) return sql.query<Row>(text, params);
          slow = undefined;
          return slowed<Row>(mode, text, params).finally(() => lateInsertSettled());
        };
        return { ...sql, query } as SqlBackend;
      },
    });
  });
  afterAll(() => svc?.close());

  const create = (key: string) => svc.post("/api/v1/posts", { actor: `i-slow-${key}`, json: { text: "slow" }, headers: { "idempotency-key": key } });
  const postIds = async (key: string) =>
    ((await svc.get("/api/v1/posts", { actor: `i-slow-${key}` })).json.data.items as { uri: string }[]).map((p) => p.uri.split("/").pop());

  it("frees its key with the 503, as any failure's: the client's retry makes the post, never a 409, and the late write stores nothing", async () => {
    const late = lateInsert();
    slow = "before";
    expect((await create("before")).status).toBe(503);
    const retry = await create("before");
    expect(retry.status).toBe(201);
    await late;
    // The first request's write, fenced by the key the retry now holds, wrote no second post.
    expect(await postIds("before")).toEqual([retry.json.data.postId]);
    expect((await create("before")).headers["idempotent-replayed"]).toBe("true");
  });

  it("whose write is committing keeps the answer it stores: the release finds it stored and frees nothing, and the retry replays it", async () => {
    const late = lateInsert();
    slow = "committing";
    expect((await create("committing")).status).toBe(503);
    // A retry while the write commits is 409 (the first still runs) or, once it waited for the commit, its replay.
    await late;
    const retry = await create("committing");
    expect(retry.status).toBe(201);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(await postIds("committing")).toEqual([retry.json.data.postId]);
  });
});

describe("a PATCH replayed hours after its first answer", () => {
  let svc: TestService;
  let offsetMs = 0;
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: backends[0]!.open, now: () => new Date(Date.now() + offsetMs) });
  });
  afterAll(() => svc?.close());

  it("is the stored answer with its playback URL signed again, so the audio it names still plays", async () => {
    const clip = await audioFixture("audio/wav");
    const { body, contentType } = await multipartBody([{ name: "file", bytes: clip.bytes, type: "audio/wav" }]);
    const blob = (await svc.post("/api/v1/audio/upload", { actor: "i-late", body, headers: { "content-type": contentType } })).json.data.blob;
    const post = await createPost(svc, "i-late", { text: "late", embed: { $type: "dev.svc.embed.audio", audio: blob } });
    const patch = () =>
      svc.call("PATCH", `/api/v1/posts/${post.uri.split("/").pop()}`, { actor: "i-late", json: { processing: { waveform: true } }, headers: { "idempotency-key": "key-late" } });
    const first = await patch();
    expect(first.status).toBe(202);
    offsetMs = 2 * 3600_000;
    const replay = await patch();
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    const url = replay.json.data.embed.url as string;
    expect(url).not.toBe(first.json.data.embed.url);
    expect((await svc.get(url.slice(svc.baseUrl.length), { token: null })).status).toBe(200);
    // Nothing else of the stored answer changed.
    expect({ ...replay.json, data: { ...replay.json.data, embed: { ...replay.json.data.embed, url: "" } } }).toEqual({
      ...first.json,
      data: { ...first.json.data, embed: { ...first.json.data.embed, url: "" } },
    });
  });

  it("signs nothing it did not hand out: a playback URL written into the post's text (another tenant's blob) is replayed as written, and does not play", async () => {
    const clip = await audioFixture("audio/wav");
    const upload = async (token: string, actor: string) => {
      const { body, contentType } = await multipartBody([{ name: "file", bytes: clip.bytes, type: "audio/wav" }]);
      return (await svc.post("/api/v1/audio/upload", { actor, token, body, headers: { "content-type": contentType } })).json.data.blob;
    };
    const alphas = await upload(svc.tenants.alpha.token, "i-victim");
    const betas = await upload(svc.tenants.beta.token, "i-mallory");
    const lure = `${svc.baseUrl}/api/v1/audio?url=blobs/alpha/${alphas.ref.$link}`;
    const post = await createPost(svc, "i-mallory", { text: lure, embed: { $type: "dev.svc.embed.audio", audio: betas } }, svc.tenants.beta.token);
    const patch = () =>
      svc.call("PATCH", `/api/v1/posts/${post.uri.split("/").pop()}`, {
        actor: "i-mallory",
        token: svc.tenants.beta.token,
        json: { processing: { waveform: true } },
        headers: { "idempotency-key": "key-oracle" },
      });
    const first = await patch();
    expect(first.status).toBe(202);
    const replay = await patch();
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json.data.record.text).toBe(lure);
    expect(replay.json.data.cid).toBe(first.json.data.cid);
    expect((await svc.get(lure.slice(svc.baseUrl.length), { token: null })).status).toBe(403);
    // The post's own audio is still signed afresh, for its own tenant.
    expect((await svc.get((replay.json.data.embed.url as string).slice(svc.baseUrl.length), { token: null })).status).toBe(200);
  });
});

describe.each(dataApiBackends)("a replayed answer larger than the Data API's 64 KB row, over $name", ({ open }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver: "lambda", sql: open, env: { SVC_PROCESSING_STUB: "true", SVC_PROCESSING_INLINE: "true" } });
  });
  afterAll(() => svc?.close());

  it("a PATCH whose answer carries a long post's waveform replays whole, and a different body under its key is still 422", async () => {
    const blob = await seedAudio(svc.deps, "alpha", noiseWav(), 10 * 60_000);
    const post = await createPost(svc, "i-long", audioPost(blob));
    const patch = (processing: Record<string, boolean>) =>
      svc.call("PATCH", `/api/v1/posts/${post.uri.split("/").pop()}`, { actor: "i-long", json: { processing }, headers: { "idempotency-key": "key-long" } });
    const first = await patch({ waveform: true });
    expect(first.status).toBe(202);
    expect(first.body.length).toBeGreaterThan(64 * 1024);
    const replay = await patch({ waveform: true });
    expect(replay.status).toBe(202);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json.data.embed.waveform).toEqual(first.json.data.embed.waveform);
    expect((await patch({ transcribe: true })).status).toBe(422);
  });
});
