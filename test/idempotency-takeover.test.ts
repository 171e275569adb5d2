import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyLeaseMs } from "../core/idempotency/claim";
import type { SqlBackend } from "../core/sql/port";
import { backends } from "./support/databases";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startTestService, type TestService } from "./support/test-service";

describe.each(backends)("a write that runs after its key's lease lapsed and another request took the key over, on $name", (backend) => {
  let svc: TestService;
  let offsetMs = 0;
  /** Set to hold the next statement with `text` until released: the first request stalls there, as on a slow database. */
  let hold: { text: string; reached: () => void; released: Promise<void> } | undefined;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      now: () => new Date(Date.now() + offsetMs),
      sql: async () => {
        const sql = await backend.open();
        const stall = async (text: string) => {
          const held = hold && text.includes(hold.text) ? hold : undefined;
          if (!held) return;
          hold = undefined;
          held.reached();
          await held.released;
        };
        return { ...sql, query: async (text, params) => (await stall(text), sql.query(text, params)) } as SqlBackend;
      },
    });
  });
  afterAll(() => svc?.close());

  /** Sends the first request, held at its `text` statement until the returned release is called. */
  const stalled = async <T>(text: string, send: () => Promise<T>) => {
    let release!: () => void;
    const reached = new Promise<void>((reached) => (hold = { text, reached, released: new Promise((r) => (release = r)) }));
    const first = send();
    await reached;
    return { first, release };
  };

  it("a create stores nothing and answers 409 IDEMPOTENCY_IN_PROGRESS: the key keeps one post, the later request's, and replays it", async () => {
    const create = () => svc.post("/api/v1/posts", { actor: "i-lease", json: { text: "once" }, headers: { "idempotency-key": "key-lease" } });
    const { first, release } = await stalled("INSERT INTO posts", create);
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

  it("a PATCH writes no stage and answers 409 IDEMPOTENCY_IN_PROGRESS: the stages are requested once, by the later request", async () => {
    const post = await svc.post("/api/v1/posts", { actor: "i-lease-p", json: audioPost(await seedAudio(svc.deps, "alpha")) });
    const postId = post.json.data.postId as string;
    const patch = () =>
      svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "i-lease-p", json: { processing: { waveform: true } }, headers: { "idempotency-key": "key-lease-p" } });
    const generation = async () =>
      (await svc.deps.sql.query<{ generation: number }>("SELECT generation FROM post_stages WHERE rkey = $1", [postId]))[0]?.generation;
    const { first, release } = await stalled("INSERT INTO post_stages", patch);
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
});
