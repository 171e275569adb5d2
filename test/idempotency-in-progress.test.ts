/**
 * An Idempotency-Key while its first request still runs (docs/decisions.md#idempotency): the same body is 409
 * IDEMPOTENCY_IN_PROGRESS, another body 422 IDEMPOTENCY_KEY_REUSED; the first then finishes with its 201. The first
 * request is held at its insert, so "still running" is certain rather than a race.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SqlBackend } from "../core/sql/port";
import { backends } from "./support/databases";
import { startTestService, type TestService } from "./support/test-service";

describe.each(backends)("a key whose first request still runs, on $name", (backend) => {
  let svc: TestService;
  /** Set to hold the next statement containing `text` until released (as idempotency-takeover.test.ts does). */
  let hold: { text: string; reached: () => void; released: Promise<void> } | undefined;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
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

  it("the same key and body is 409 IDEMPOTENCY_IN_PROGRESS, another body 422 IDEMPOTENCY_KEY_REUSED, and the first then answers 201", async () => {
    const create = (text: string) => svc.post("/api/v1/posts", { actor: "in-progress", json: { text }, headers: { "idempotency-key": "key-in-progress" } });
    let release!: () => void;
    const reached = new Promise<void>((reached) => (hold = { text: "INSERT INTO posts", reached, released: new Promise((r) => (release = r)) }));
    const first = create("once");
    await reached;

    const same = await create("once");
    expect(same.status).toBe(409);
    expect(same.json.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
    const other = await create("another body");
    expect(other.status).toBe(422);
    expect(other.json.error.code).toBe("IDEMPOTENCY_KEY_REUSED");

    release();
    const done = await first;
    expect(done.status).toBe(201);
    expect(done.headers["idempotent-replayed"]).toBeUndefined();
    expect((await svc.get("/api/v1/posts", { actor: "in-progress" })).json.data.items).toHaveLength(1);
  });
});
