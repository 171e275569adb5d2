/** Replies are read oldest first by key, and a client pages on from the last key it saw: none may land behind it. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../core/sql/postgres";
import { backends, migratedDatabase } from "./support/databases";
import { slowedSql } from "./support/slowed-sql";
import type { SqlBackend, SqlValue } from "../core/sql/port";
import { nextTid } from "../core/records/tid";
import { startTestService, type TestService } from "./support/test-service";

describe.each(backends)("replies to one post, paged forward, on $name", ({ open }) => {
  let svc: TestService;
  let slowNextInsert = false;
  let passes: { left: number; parent: { uri: string; cid: string } } | undefined;
  beforeAll(async () => {
    const slowed = slowedSql(open, (text) => (slowNextInsert && text.includes("INSERT INTO posts") ? ((slowNextInsert = false), 400) : undefined));
    svc = await startTestService({ driver: "node", sql: () => passedByLaterReplies(slowed, () => passes) });
  });
  afterAll(() => svc?.close());

  it("a reply passed again and again by later replies committed ahead of it is still stored, keyed after them all", async () => {
    const prompt = (await svc.get(`/api/v1/posts/${(await svc.post("/api/v1/posts", { actor: "host", json: { text: "prompt" } })).json.data.postId}`, { actor: "host" })).json.data;
    const ref = { uri: prompt.uri, cid: prompt.cid };
    // Before each of its inserts, one more reply keyed later than any so far commits: a burst of replies to one post.
    passes = { left: 6, parent: ref };
    const passed = await svc.post("/api/v1/posts", { actor: "passed", json: { text: "passed", reply: { root: ref, parent: ref } } });
    expect(passes.left).toBe(0);
    expect(passed.status).toBe(201);
    const listed = (await svc.get(`/api/v1/posts/${prompt.uri.split("/").pop()}/replies?limit=100`, { actor: "host" })).json.data.items;
    expect(listed.map((p: { record: { text: string } }) => p.record.text)).toEqual(["ahead", "ahead", "ahead", "ahead", "ahead", "ahead", "passed"]);
  });

  it("a reply that commits after later replies is keyed after them: a client paging forward from the last reply it saw still gets it", async () => {
    const prompt = (await svc.get(`/api/v1/posts/${(await svc.post("/api/v1/posts", { actor: "host", json: { text: "prompt" } })).json.data.postId}`, { actor: "host" })).json.data;
    const ref = { uri: prompt.uri, cid: prompt.cid };
    const reply = (actor: string) => svc.post("/api/v1/posts", { actor, json: { text: actor, reply: { root: ref, parent: ref } } });
    const replies = (query: string) => svc.get(`/api/v1/posts/${prompt.uri.split("/").pop()}/replies?${query}`, { actor: "host" });
    await reply("r0");
    await reply("r1");
    // A's key is minted now; its insert reaches the database after B's and C's have committed.
    slowNextInsert = true;
    const late = reply("a");
    await new Promise((r) => setTimeout(r, 50));
    await reply("b");
    await reply("c");
    const first = (await replies("limit=3")).json.data;
    expect(first.items.map((p: { record: { text: string } }) => p.record.text)).toEqual(["r0", "r1", "b"]);
    expect((await late).status).toBe(201);
    const rest = (await replies(`limit=3&cursor=${first.nextCursor}`)).json.data;
    expect(rest.items.map((p: { record: { text: string } }) => p.record.text)).toEqual(["c", "a"]);
    // Its createdAt is its key's instant, so the order by key is the order by createdAt too.
    const all = (await replies("limit=100")).json.data.items as { record: { createdAt: string } }[];
    expect(all.map((p) => p.record.createdAt)).toEqual(all.map((p) => p.record.createdAt).sort());
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("replies to one post racing in the database on postgres", () => {
  it("a reply whose insert waits on one keyed later stores nothing once that one commits, so its writer keys it after", async () => {
    const db = await migratedDatabase(backends.find((b) => b.name === "postgres")!);
    const [a, b] = [await openPostgres(db.url!), await openPostgres(db.url!)];
    try {
      const record = (text: string, parent?: string) =>
        JSON.stringify({ $type: "dev.svc.audio.post", text, createdAt: "2026-11-27T00:00:00.000Z", ...(parent && { reply: { root: { uri: parent, cid: "c" }, parent: { uri: parent, cid: "c" } } }) });
      const insert = (sql: typeof a, rkey: string, text: string, parent?: string) =>
        sql.query("INSERT INTO posts (app_id, rkey, record, cid, author_id) VALUES ('t', $1, $2::json, 'c', $3) RETURNING rkey", [rkey, record(text, parent), text]);
      await insert(a, "3aaaaaaaaaa22", "prompt");
      const parent = "at://did:web:t/dev.svc.audio.post/3aaaaaaaaaa22";
      let earlier: Promise<unknown[]> | undefined;
      await a.transaction(async (tx) => {
        await insert(tx as typeof a, "3aaaaaaaaac22", "later", parent);
        // Keyed before "later" but sent while "later" is uncommitted: it waits on the parent's row.
        earlier = insert(b, "3aaaaaaaaab22", "earlier", parent);
        await new Promise((r) => setTimeout(r, 300));
      });
      expect(await earlier).toEqual([]);
      expect((await a.query("SELECT rkey FROM posts WHERE kind = 'reply' ORDER BY rkey")).map((r) => r.rkey)).toEqual(["3aaaaaaaaac22"]);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await db.close();
    }
  });
});

/** A database where, before an insert of the post "passed", another reply to its parent keyed later still commits. */
const passedByLaterReplies = async (
  open: () => Promise<SqlBackend>,
  passes: () => { left: number; parent: { uri: string; cid: string } } | undefined,
): Promise<SqlBackend> => {
  const sql = await open();
  let ahead = Date.now();
  const query = async <Row,>(text: string, params?: readonly SqlValue[]): Promise<Row[]> => {
    const pass = passes();
    if (pass && pass.left > 0 && text.includes("INSERT INTO posts") && params?.some((v) => typeof v === "string" && v.includes('"text":"passed"'))) {
      pass.left--;
      ahead = Math.max(ahead, Date.now()) + 1000;
      const record = { $type: "dev.svc.audio.post", text: "ahead", createdAt: new Date(ahead).toISOString(), reply: { root: pass.parent, parent: pass.parent } };
      await sql.query("INSERT INTO posts (app_id, rkey, record, cid, author_id) VALUES ($1, $2, $3::json, 'c', 'ahead')", [
        String(params[0]),
        nextTid(ahead),
        JSON.stringify(record),
      ]);
    }
    return sql.query<Row>(text, params);
  };
  return { ...sql, query } as SqlBackend;
};
