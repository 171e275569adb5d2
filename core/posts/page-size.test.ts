import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCappedDataApi, dataApiResponseCap } from "../../test/support/data-api-response-cap";
import { migrationsDir } from "../../test/support/databases";
import { migrate } from "../sql/migrate";
import { listPosts, pageArtifactBudget } from "./post-store";

/** The Data API adapter over the emulator behind a proxy that refuses an answer past 1 MiB, as AWS does. */
let sql: Awaited<ReturnType<typeof openCappedDataApi>>;
const appId = "big";
const postCount = 40;
// A long transcript per post (about 31 KB of JSON): 40 of them are well past 1 MiB in one answer.
const transcript = (i: number) => ({
  $type: "dev.svc.transcript",
  text: `post ${i} `.padEnd(24_000, "words spoken at length "),
  segments: Array.from({ length: 120 }, (_, s) => ({ startMs: s * 1000, endMs: s * 1000 + 900, text: `segment ${s} "quoted" text` })),
});
const rkeyOf = (i: number) => `3lbig${String(i).padStart(8, "0")}`;

beforeAll(async () => {
  sql = await openCappedDataApi();
  await migrate(sql, migrationsDir);
  for (let i = 0; i < postCount; i++) {
    const record = { $type: "dev.svc.feed.post", text: `long post ${i}`, createdAt: new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString() };
    await sql.query("INSERT INTO posts (app_id, rkey, record, cid, author_id) VALUES ($1, $2, $3::json, $4, $5)", [
      appId, rkeyOf(i), JSON.stringify(record), `bafyreipost${i}`, "alice",
    ]);
    await sql.query("INSERT INTO transcripts (app_id, rkey, record, cid, updated_at) VALUES ($1, $2, $3::json, $4, now())", [
      appId, rkeyOf(i), JSON.stringify(transcript(i)), `bafyreitranscript${i}`,
    ]);
  }
}, 120_000);

afterAll(() => sql?.close());

describe("list pages under the Data API's 1 MiB response cap", () => {
  it("the proxy enforces the cap: one answer holding every long post is refused as AWS refuses it", async () => {
    await expect(sql.query("SELECT p.record, t.record AS transcript FROM posts p JOIN transcripts t USING (app_id, rkey) WHERE app_id = $1", [appId])).rejects.toThrow(/too large|response size/i);
  });

  it("a page of long posts returns fewer items than asked, and nextCursor continues until every post is read once", async () => {
    sql.sizes.length = 0;
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await listPosts(sql, appId, { kind: "own", authorId: "alice" }, cursor, 100);
      pages++;
      expect(page.items.length).toBeGreaterThan(0);
      if (pages === 1) expect(page.items.length).toBeLessThan(postCount);
      seen.push(...page.items.map((p) => p.rkey));
      if (!page.nextCursor) break;
      expect(page.nextCursor).toBe(page.items.at(-1)!.rkey);
      cursor = page.nextCursor;
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: postCount }, (_, i) => rkeyOf(postCount - 1 - i)));
    expect(Math.max(...sql.sizes)).toBeLessThanOrEqual(dataApiResponseCap);
  });

  it("a short page is unchanged: the limit, not the budget, ends it", async () => {
    const page = await listPosts(sql, appId, { kind: "own", authorId: "alice" }, undefined, 3);
    expect(page.items.map((p) => p.rkey)).toEqual([rkeyOf(39), rkeyOf(38), rkeyOf(37)]);
    expect(page.nextCursor).toBe(rkeyOf(37));
  });
});

describe("list pages under Lambda's 6 MB answer", () => {
  const hoursApp = "hours";
  const hourCount = 6;
  // About an hour of transcript words each (a megabyte of JSON): too large to travel inline, read after the page.
  const hourTranscript = (i: number) => ({ $type: "dev.svc.audio.transcript", text: `hour ${i} `.padEnd(1_000_000, "so we talked about it ") });

  beforeAll(async () => {
    for (let i = 0; i < hourCount; i++) {
      const record = { $type: "dev.svc.feed.post", text: `hour post ${i}`, createdAt: new Date(Date.UTC(2026, 10, 2, 0, i)).toISOString() };
      await sql.query("INSERT INTO posts (app_id, rkey, record, cid, author_id) VALUES ($1, $2, $3::json, $4, $5)", [
        hoursApp, rkeyOf(i), JSON.stringify(record), `bafyreihour${i}`, "carol",
      ]);
      await sql.query("INSERT INTO transcripts (app_id, rkey, record, cid, updated_at) VALUES ($1, $2, $3::json, $4, now())", [
        hoursApp, rkeyOf(i), JSON.stringify(hourTranscript(i)), `bafyreihourtranscript${i}`,
      ]);
    }
  }, 120_000);

  it("a page stops once its posts' artifacts pass 4 MiB, read after it or not, and nextCursor continues until every post is read once", async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await listPosts(sql, hoursApp, { kind: "own", authorId: "carol" }, cursor, 100);
      expect(page.items.length).toBeGreaterThan(0);
      for (const item of page.items) expect(item.transcript?.text).toBe(hourTranscript(Number(item.rkey.slice(-8))).text);
      sizes.push(page.items.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item.transcript)), 0));
      seen.push(...page.items.map((p) => p.rkey));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(sizes.length).toBe(2);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(pageArtifactBudget);
    expect(seen).toEqual(Array.from({ length: hourCount }, (_, i) => rkeyOf(hourCount - 1 - i)));
  });
});
