import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertPost } from "../core/posts/insert-post";
import { buildPostRecord } from "../core/records/post-schema";
import { recordCid } from "../core/records/record-cid";
import { nextTid, tidTime } from "../core/records/tid";
import { dataApiResponseCap, openCappedDataApi } from "./support/data-api-response-cap";
import { startTestService, type TestService } from "./support/test-service";

/**
 * A list page is cut by what its rows cost in the Data API's answer, which refuses one over 1 MiB: every text column
 * a row carries (the author's DID and ids, stage states, the rate limits the first read takes), and the Data API's
 * own escaping of JSON text, under which each quote and backslash costs twice.
 */
describe("a list page stays under the Data API's 1 MiB answer, Lambda over the Data API", () => {
  let svc: TestService;
  let sizes: number[];
  const quotes = (n: number) => '"'.repeat(n);
  const postCount = 60;

  /** `postCount` posts of quote-filled text and labels by `actor`, straight into the store. */
  const seedPosts = async (actor: string, actorDid: string | null) => {
    for (let i = 0; i < postCount; i++) {
      const rkey = nextTid();
      const record = buildPostRecord({ text: quotes(3000), selfLabels: Array.from({ length: 10 }, () => quotes(128)) }, tidTime(rkey));
      await insertPost(svc.deps.sql, { appId: "alpha", rkey, record, cid: recordCid(record), authorId: actor, authorDid: actorDid });
    }
  };

  /** Every page of the actor's posts, each answered 200 with every Data API answer within the cap. */
  const readAll = async (actor: string) => {
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor = "";
    for (;;) {
      sizes.length = 0;
      const page = await svc.get(`/api/v1/posts?limit=100${cursor && `&cursor=${cursor}`}`, { actor });
      expect(page.status, page.body.toString().slice(0, 300)).toBe(200);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(dataApiResponseCap);
      const { items, nextCursor } = page.json.data as { items: { uri: string }[]; nextCursor: string | null };
      pageSizes.push(items.length);
      seen.push(...items.map((item) => item.uri.split("/").pop()!));
      if (!nextCursor) break;
      expect(nextCursor).toBe(seen.at(-1));
      cursor = nextCursor;
    }
    return { seen, pageSizes };
  };

  beforeAll(async () => {
    svc = await startTestService({
      driver: "lambda",
      sql: async () => {
        const sql = await openCappedDataApi();
        sizes = sql.sizes;
        return sql;
      },
    });
  }, 120_000);
  afterAll(() => svc?.close());

  it.each([
    { name: "an actor id of 256 quotes (in the author columns and the rate-limit key of every row)", actor: quotes(256), did: null },
    { name: "a 2000-character author DID on every row", actor: "alice", did: `did:plc:${"a".repeat(1992)}` },
    { name: "plain ids", actor: "plain", did: null },
  ])("posts whose text and labels are all quotes, with $name: each page 200, cut with a cursor that reads every post once", async ({ actor, did }) => {
    await seedPosts(actor, did);
    const { seen, pageSizes } = await readAll(actor);
    expect(pageSizes.length).toBeGreaterThan(1);
    expect(new Set(seen).size).toBe(postCount);
    expect(seen).toEqual([...seen].sort().reverse());
  }, 120_000);
});
