import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, migratedDatabase, type TestDatabase } from "./support/databases";

/**
 * A reply has a parent and a root author, a prompt has neither, and `kind` follows the record: held by the migrated
 * schema itself (posts_reply_shape and generated columns), so a writer that skips request validation cannot store a
 * post of the wrong shape. Raw SQL, as such a writer would send it.
 */
describe.each(backends)("the posts table's reply shape on $name", (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migratedDatabase(backend);
  });
  afterAll(() => db?.close());

  const did = "did:web:alpha.test";
  const ref = (rkey: string) => ({ uri: `at://${did}/dev.svc.audio.post/${rkey}`, cid: "bafyreib2rxk3rh6kzwq" });
  const record = (reply?: unknown) => JSON.stringify({ $type: "dev.svc.audio.post", text: "t", createdAt: "2025-01-01T00:00:00.000Z", ...(reply ? { reply } : {}) });
  /** Inserts a row of `alpha` with the given record; `columns` adds or overrides columns. */
  const insert = (rkey: string, json: string, columns: Record<string, string> = {}) => {
    const row: Record<string, string> = { app_id: "alpha", rkey, record: json, cid: "bafyreib2rxk3rh6kzwq", author_id: "author", ...columns };
    const names = Object.keys(row);
    const values = names.map((name, i) => `$${i + 1}${name === "record" ? "::json" : ""}`);
    return db.query(`INSERT INTO posts (${names.join(", ")}) VALUES (${values.join(", ")})`, Object.values(row));
  };
  const sqlState = (promise: Promise<unknown>) =>
    promise.then(
      () => "accepted",
      (error: { code?: string; constraint?: string }) => [error.code, error.constraint].filter(Boolean).join(" "),
    );

  it("a reply row whose parent is not stored is refused by posts_reply_shape (23514): it would have no root author", async () => {
    const missing = ref("3kaaaaaaaaaaa");
    expect(await sqlState(insert("3kzzzzzzzzzz2", record({ root: missing, parent: missing })))).toBe("23514 posts_reply_shape");
    expect(await db.query(`SELECT rkey FROM posts WHERE rkey = '3kzzzzzzzzzz2'`)).toEqual([]);
  });

  it("kind is generated from the record: setting it on insert or update is refused (428C9)", async () => {
    expect(await sqlState(insert("3kzzzzzzzzzz3", record(), { kind: "reply" }))).toBe("428C9");
    await insert("3kzzzzzzzzzz4", record());
    expect(await sqlState(db.query(`UPDATE posts SET kind = 'reply' WHERE rkey = '3kzzzzzzzzzz4'`))).toBe("428C9");
    expect(await db.query(`SELECT kind FROM posts WHERE rkey = '3kzzzzzzzzzz4'`)).toEqual([{ kind: "prompt" }]);
  });

  it("a prompt given a root author is refused by posts_reply_shape (23514), and one inserted with it stores none", async () => {
    await insert("3kzzzzzzzzzz5", record());
    expect(await sqlState(db.query(`UPDATE posts SET root_author_id = 'someone' WHERE rkey = '3kzzzzzzzzzz5'`))).toBe("23514 posts_reply_shape");
    // On insert the thread facets are derived from the parent row (posts_derive_thread): a prompt has none.
    await insert("3kzzzzzzzzzz6", record(), { root_author_id: "someone", branch_author_id: "someone" });
    expect(await db.query(`SELECT root_author_id, branch_author_id FROM posts WHERE rkey IN ('3kzzzzzzzzzz5', '3kzzzzzzzzzz6')`)).toEqual([
      { root_author_id: null, branch_author_id: null },
      { root_author_id: null, branch_author_id: null },
    ]);
  });

  it("a reply to a stored prompt is accepted, with the thread facets taken from it", async () => {
    await insert("3kzzzzzzzzzz7", record());
    await insert("3kzzzzzzzzzz8", record({ root: ref("3kzzzzzzzzzz7"), parent: ref("3kzzzzzzzzzz7") }), { author_id: "responder" });
    expect(await db.query(`SELECT kind, root_author_id, branch_author_id FROM posts WHERE rkey = '3kzzzzzzzzzz8'`)).toEqual([
      { kind: "reply", root_author_id: "author", branch_author_id: "responder" },
    ]);
  });
});
