import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idempotencyLeaseMs } from "../core/idempotency/claim";
import type { SqlBackend } from "../core/sql/port";
import { backends } from "./support/databases";
import { startTestService, type TestService } from "./support/test-service";

describe.each(backends)("a create whose write runs after its key's lease lapsed and another request took the key over, on $name", (backend) => {
  let svc: TestService;
  let offsetMs = 0;
  /** Set to hold the next post insert until released: the first request stalls there, as a slow database would. */
  let hold: { reached: () => void; released: Promise<void> } | undefined;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      now: () => new Date(Date.now() + offsetMs),
      sql: async () => {
        const sql = await backend.open();
        const stall = async (text: string) => {
          const held = text.includes("INSERT INTO posts") ? hold : undefined;
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

  it("stores nothing and answers 409 IDEMPOTENCY_IN_PROGRESS: the key keeps one post, the later request's, and replays it", async () => {
    const create = () => svc.post("/api/v1/posts", { actor: "i-lease", json: { text: "once" }, headers: { "idempotency-key": "key-lease" } });
    let release!: () => void;
    const reached = new Promise<void>((reached) => (hold = { reached, released: new Promise((r) => (release = r)) }));
    const first = create();
    await reached;
    // The first request stalls past its lease: a retry takes the key over and writes its post.
    offsetMs = idempotencyLeaseMs + 1_000;
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
});
