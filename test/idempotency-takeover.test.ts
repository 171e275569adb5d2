import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyLeaseMs } from "../core/idempotency/claim";
import { findPostStatement } from "../core/posts/post-store";
import { backends } from "./support/databases";
import { heldSql } from "./support/held-sql";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startTestService, type TestService } from "./support/test-service";

describe.each(backends)("a write that runs after its key's lease lapsed and another request took the key over, on $name", (backend) => {
  let svc: TestService;
  let offsetMs = 0;
  const held = heldSql();
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", now: () => new Date(Date.now() + offsetMs), sql: held.open(backend.open) });
  });
  afterAll(() => svc?.close());

  it("a create stores nothing and answers 409 IDEMPOTENCY_IN_PROGRESS: the key keeps one post, the later request's, and replays it", async () => {
    const create = () => svc.post("/api/v1/posts", { actor: "i-lease", json: { text: "once" }, headers: { "idempotency-key": "key-lease" } });
    const { first, release } = await held.stalled("INSERT INTO posts", create);
    // The first request stalls past its lease: a retry takes the key over and writes its post.
    offsetMs += idempotencyLeaseMs + 1_000;
    const retry = await create();
    expect(retry.status).toBe(201);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
    release();
    const late = await first;
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    expect((await svc.get("/api/v1/posts", { actor: "i-lease" })).json.data.items).toHaveLength(1);
    const replay = await create();
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json.data.postId).toBe(retry.json.data.postId);
  });

  /** An audio post of `actor`, the PATCH requesting its waveform under `key`, and the stage's generation (one per request). */
  const patchable = async (actor: string, key: string) => {
    const post = await svc.post("/api/v1/posts", { actor, json: audioPost(await seedAudio(svc.deps, "alpha")) });
    const postId = post.json.data.postId as string;
    const patch = () => svc.call("PATCH", `/api/v1/posts/${postId}`, { actor, json: { processing: { waveform: true } }, headers: { "idempotency-key": key } });
    const generation = async () =>
      (await svc.deps.sql.query<{ generation: number }>("SELECT generation FROM post_stages WHERE rkey = $1", [postId]))[0]?.generation;
    return { patch, generation };
  };

  it("a PATCH writes no stage and answers 409 IDEMPOTENCY_IN_PROGRESS: the stages are requested once, by the later request", async () => {
    const { patch, generation } = await patchable("i-lease-p", "key-lease-p");
    const { first, release } = await held.stalled("INSERT INTO post_stages", patch);
    offsetMs += idempotencyLeaseMs + 1_000;
    const retry = await patch();
    expect(retry.status).toBe(202);
    const requested = await generation();
    release();
    const late = await first;
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    // Unfenced, the late write requested the settled stage again: a second run and webhook under one key.
    expect(await generation()).toBe(requested);
    expect((await patch()).headers["idempotent-replayed"]).toBe("true");
  });

  it("a PATCH whose request died between its write and its answer is answered by the retry that takes its key over, which writes nothing again", async () => {
    const { patch, generation } = await patchable("i-died-p", "key-died-p");
    // Never released while it matters: the first request's process is gone after its stage write committed.
    const { first, release } = await held.stalled(findPostStatement, patch);
    expect(await generation()).toBe(1);
    offsetMs += idempotencyLeaseMs + 1_000;
    const retry = await patch();
    expect(retry.status).toBe(202);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
    expect(retry.json.data.processing.waveform).toMatchObject({ status: "skipped" });
    // Written again, the stage would settle a second time, with a second webhook under one key.
    expect(await generation()).toBe(1);
    const replay = await patch();
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json).toEqual(retry.json);
    release();
    await first;
    expect((await patch()).json).toEqual(retry.json);
  });

  it("a PATCH that fails after its write frees its key for the retry at once, which answers without writing again", async () => {
    const { patch, generation } = await patchable("i-failed-p", "key-failed-p");
    const { first, release } = await held.stalled(findPostStatement, patch, true);
    release();
    expect((await first).status).toBeGreaterThanOrEqual(500);
    // Not a 409 until the lease lapses, and not a second request of the stages.
    const retry = await patch();
    expect(retry.status).toBe(202);
    expect(await generation()).toBe(1);
  });
});
