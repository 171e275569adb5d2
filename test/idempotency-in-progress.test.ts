/**
 * An Idempotency-Key while its first request still runs (docs/decisions.md#idempotency): the same body is 409
 * IDEMPOTENCY_IN_PROGRESS, another body 422 IDEMPOTENCY_KEY_REUSED; the first then finishes with its 201. The first
 * request is held at its insert, so "still running" is certain rather than a race.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "./support/databases";
import { heldSql } from "./support/held-sql";
import { startTestService, type TestService } from "./support/test-service";

describe.each(backends)("a key whose first request still runs, on $name", (backend) => {
  let svc: TestService;
  const held = heldSql();
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: held.open(backend.open) });
  });
  afterAll(() => svc?.close());

  it("the same key and body is 409 IDEMPOTENCY_IN_PROGRESS, another body 422 IDEMPOTENCY_KEY_REUSED, and the first then answers 201", async () => {
    const create = (text: string) => svc.post("/api/v1/posts", { actor: "in-progress", json: { text }, headers: { "idempotency-key": "key-in-progress" } });
    const { first, release } = await held.stalled("INSERT INTO posts", () => create("once"));

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

  it("a 409 while the first request runs takes a read, not a write: retries in flight never spend the write budget of the request they retry", async () => {
    const create = () => svc.post("/api/v1/posts", { actor: "in-progress-budget", json: { text: "once" }, headers: { "idempotency-key": "key-budget" } });
    // Held at its insert, the first request has taken its write (9 of 10 left).
    const { first, release } = await held.stalled("INSERT INTO posts", create);

    // More retries than the write limit allows: each is a 409 that took the read limits, as a replay does.
    for (let i = 0; i < 12; i++) {
      const retry = await create();
      expect(retry.status).toBe(409);
      expect(retry.json.error.code).toBe("IDEMPOTENCY_IN_PROGRESS");
      expect(retry.headers.ratelimit).toMatch(new RegExp(`^"actor";r=${59 - i};t=\\d+$`));
    }

    release();
    expect((await first).status).toBe(201);
    // The first request's write is the only one taken.
    expect((await svc.post("/api/v1/posts", { actor: "in-progress-budget", json: { text: "next" } })).headers.ratelimit).toMatch(/^"actor";r=8;/);
  });
});
