import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SqlBackend, SqlValue } from "../core/sql/port";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/**
 * A create that fails with an internal error releases its Idempotency-Key at once (docs/decisions.md#idempotency): the
 * client's retry with the same key and body makes the post, rather than a 409 or a replay of the failure.
 */
describe.each(edgeMatrix)("a create answered 500 INTERNAL, over $name", ({ driver, sql }) => {
  let svc: TestService;
  /** Set to make the next post insert throw, as a bug in the write would: an error that names no dependency. */
  let failNextInsert = false;
  beforeAll(async () => {
    svc = await startTestService({
      driver,
      sql: async () => {
        const inner = await sql();
        const query = async <Row,>(text: string, params?: readonly SqlValue[]): Promise<Row[]> => {
          if (failNextInsert && text.includes("INSERT INTO posts")) {
            failNextInsert = false;
            throw new Error("synthetic failure of the post insert");
          }
          return inner.query<Row>(text, params);
        };
        return { ...inner, query } as SqlBackend;
      },
    });
  });
  afterAll(() => svc?.close());

  it("releases its Idempotency-Key at once: the retry with the same key and body is 201, a new post, not replayed and not 409", async () => {
    const actor = "ie-1";
    const create = () => svc.post("/api/v1/posts", { actor, json: { text: "after a 500" }, headers: { "idempotency-key": "key-internal" } });
    failNextInsert = true;
    const failed = await create();
    expect(failed.status).toBe(500);
    expect(failed.json.error.code).toBe("INTERNAL");
    expect(failNextInsert).toBe(false);

    const retry = await create();
    expect(retry.status).toBe(201);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
    const own = (await svc.get("/api/v1/posts", { actor })).json.data.items as { uri: string }[];
    expect(own.map((p) => p.uri.split("/").pop())).toEqual([retry.json.data.postId]);
    // The success is what the key now holds.
    const replay = await create();
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json).toEqual(retry.json);
  });
});
