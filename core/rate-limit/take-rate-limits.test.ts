import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, dataApiBackends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { countStatements } from "../sql/count-statements";
import { openPostgres } from "../sql/postgres";
import type { Sql } from "../sql/port";
import { retryAfterSeconds } from "./rate-limit-headers";
import { takeRateLimits, type RateLimitRequest } from "./take-rate-limits";

/** The request's time, as the service passes deps.now(): a test moves it instead of sleeping through a window. */
const clock = (start = Date.now()) => (ms = 0) => new Date(start + ms);
const limiter = (limit: number, windowMs: number, name = "actor"): RateLimitRequest => ({
  name,
  key: `${name}:${randomUUID()}`,
  limit,
  windowMs,
});
const takeMany = async (sql: Sql, hits: RateLimitRequest[], n: number, now = new Date()) => {
  const allowed: boolean[] = [];
  for (let i = 0; i < n; i++) allowed.push((await takeRateLimits(sql, hits, now)).allowed);
  return allowed;
};

describe.each([...backends, ...dataApiBackends])("rate limits on $name", (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migratedDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("a limit of N allows exactly N requests in the window, then denies", async () => {
    const hit = limiter(5, 60_000);
    expect(await takeMany(db, [hit], 7)).toEqual([true, true, true, true, true, false, false]);
  });

  it("remaining counts down with each admitted request", async () => {
    const hit = limiter(3, 60_000);
    const remaining = [];
    for (let i = 0; i < 4; i++) remaining.push((await takeRateLimits(db, [hit], new Date())).results[0]!.remaining);
    expect(remaining).toEqual([2, 1, 0, 0]);
  });

  it("taking a request's limiters costs exactly one SQL statement", async () => {
    const counted = countStatements(db);
    await takeRateLimits(counted, [limiter(10, 60_000, "actor"), limiter(100, 60_000, "ip")], new Date());
    expect(counted.count).toBe(1);
  });

  it("the window slides on the request's clock: a slot comes back when its hit leaves the window, one at a time", async () => {
    const W = 1_000;
    const at = clock();
    const hit = limiter(2, W);
    expect((await takeRateLimits(db, [hit], at(0))).allowed).toBe(true);
    expect((await takeRateLimits(db, [hit], at(W / 2))).allowed).toBe(true);
    expect((await takeRateLimits(db, [hit], at(W / 2))).allowed).toBe(false);
    // Still inside the first hit's window: nothing is back.
    expect((await takeRateLimits(db, [hit], at(W - 1))).allowed).toBe(false);
    // The first hit has left the window, the second has not: exactly one slot is back.
    expect(await takeMany(db, [hit], 2, at(W + 1))).toEqual([true, false]);
  });

  it("Retry-After is positive and never longer than the window", async () => {
    const W = 5_000;
    const hit = limiter(2, W);
    await takeMany(db, [hit], 2);
    const denied = await takeRateLimits(db, [hit], new Date());
    expect(denied.allowed).toBe(false);
    const r = denied.results[0]!;
    expect(r.resetMs).toBeGreaterThan(0);
    expect(r.resetMs).toBeLessThanOrEqual(W);
    expect(retryAfterSeconds(denied.results)).toBeGreaterThanOrEqual(1);
    expect(retryAfterSeconds(denied.results)).toBeLessThanOrEqual(W / 1000);
  });

  it("Retry-After is when the request would be admitted again", async () => {
    const W = 1_500;
    const at = clock();
    const hit = limiter(1, W);
    await takeRateLimits(db, [hit], at(0));
    const denied = await takeRateLimits(db, [hit], at(100));
    const resetMs = denied.results[0]!.resetMs;
    expect(resetMs).toBe(W - 100);
    expect((await takeRateLimits(db, [hit], at(100 + resetMs - 1))).allowed).toBe(false);
    expect((await takeRateLimits(db, [hit], at(100 + resetMs))).allowed).toBe(true);
  });

  it("the actor and IP limiters apply together and a denial by either denies the request", async () => {
    const actor = limiter(2, 60_000, "actor");
    const ip = limiter(3, 60_000, "ip");
    expect(await takeMany(db, [actor, ip], 3)).toEqual([true, true, false]);
    const byActor = await takeRateLimits(db, [actor, ip], new Date());
    expect(byActor.results.map((r) => [r.name, r.allowed])).toEqual([
      ["actor", false],
      ["ip", true],
    ]);
    // Another actor behind the same address uses the last IP slot, then the IP limiter denies it.
    const other = limiter(10, 60_000, "actor");
    expect(await takeMany(db, [other, ip], 2)).toEqual([true, false]);
    const byIp = await takeRateLimits(db, [other, ip], new Date());
    expect(byIp.results.find((r) => r.name === "ip")!.allowed).toBe(false);
    expect(byIp.results.find((r) => r.name === "actor")!.allowed).toBe(true);
  });

  it("a request denied by one limiter is not counted by the others", async () => {
    const actor = limiter(1, 60_000, "actor");
    const ip = limiter(5, 60_000, "ip");
    await takeMany(db, [actor, ip], 4); // one admitted, three denied by the actor limiter
    const ipAlone = await takeRateLimits(db, [ip], new Date());
    expect(ipAlone.results[0]!.remaining).toBe(3);
  });

  it("a refused request leaves no hit behind: each row reports and keeps what it held before", async () => {
    const actor = limiter(2, 60_000, "actor");
    const ip = limiter(5, 60_000, "ip");
    await takeMany(db, [actor, ip], 2);
    const refused = await takeRateLimits(db, [actor, ip], new Date());
    expect(refused.results.map((r) => [r.name, r.allowed, r.remaining])).toEqual([
      ["actor", false, 0],
      ["ip", true, 3],
    ]);
    const counts = await db.query<{ key: string; n: number }>(
      "SELECT key, cardinality(hits) AS n FROM rate_limit_hits WHERE key IN ($1, $2) ORDER BY key",
      [actor.key, ip.key],
    );
    expect(counts.map((c) => c.n)).toEqual([2, 2]);
  });

  it("different keys have independent counters", async () => {
    const a = limiter(1, 60_000);
    const b = limiter(1, 60_000);
    expect(await takeMany(db, [a], 2)).toEqual([true, false]);
    expect(await takeMany(db, [b], 2)).toEqual([true, false]);
  });

  it("50 parallel takes against a limit of 10 admit exactly 10", async () => {
    const hit = limiter(10, 60_000);
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => takeRateLimits(db, [hit], new Date())));
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(10);
  });

  it("no window edge lets through twice the limit: right after a boundary the sliding log still denies", async () => {
    // A fixed-window counter resets at multiples of W; fill the limit just before such a boundary and try again
    // just after it. The sliding log must refuse until the hits themselves are a window old.
    const W = 1_000;
    const hit = limiter(5, W);
    const boundary = Math.ceil((Date.now() + 400) / W) * W;
    const at = clock(boundary);
    expect(await takeMany(db, [hit], 5, at(-200))).toEqual([true, true, true, true, true]);
    expect(await takeMany(db, [hit], 5, at(150))).toEqual([false, false, false, false, false]);
    expect((await takeRateLimits(db, [hit], at(-200 + W + 1))).allowed).toBe(true);
  });

  it("a take timed earlier that writes later leaves the row's expiry at the later hit: a prune never drops a hit still in its window", async () => {
    // A take reads its clock before it waits for the row's lock: one held up there writes after a take timed later.
    const at = clock();
    const hit = limiter(1, 1_000);
    expect((await takeRateLimits(db, [hit], at(10))).allowed).toBe(true);
    expect((await takeRateLimits(db, [hit], at(0))).allowed).toBe(false);
    // Past the earlier take's window, inside the admitted hit's.
    await db.query("SELECT count(*) FROM rate_limit_take($1::json, $2::timestamptz, 1.0)", [JSON.stringify([]), at(1_005)]);
    expect((await takeRateLimits(db, [hit], at(1_005))).allowed).toBe(false);
    expect((await takeRateLimits(db, [hit], at(1_010))).allowed).toBe(true);
  });

  it("rows whose every hit has left the window are pruned", async () => {
    const at = clock();
    const hit = limiter(3, 200);
    await takeRateLimits(db, [hit], at(0));
    await db.query("SELECT count(*) FROM rate_limit_take($1::json, $2::timestamptz, 1.0)", [JSON.stringify([]), at(300)]);
    expect(await db.query("SELECT key FROM rate_limit_hits WHERE key = $1", [hit.key])).toEqual([]);
  });

  it("the prune finds expired rows through the expiry index, never by scanning the table, though the session pruned it small", async () => {
    // Planned generically (as a session's cached plan ends up), a prune without ORDER BY expires_at scanned the
    // whole table when few rows had expired (here: 100,000 live keys, none expired), at a cost growing with it; and
    // a plan the session cached while the table was small scanned it once it was large.
    const scans = await db.transaction(async (tx) => {
      await tx.query("SET LOCAL plan_cache_mode = force_generic_plan");
      await tx.query("SELECT count(*) FROM rate_limit_take($1::json, $2::timestamptz, 1.0)", [JSON.stringify([]), new Date()]);
      await tx.query(
        `INSERT INTO rate_limit_hits (key, hits, expires_at)
         SELECT 'live:' || i, ARRAY[now()], now() + interval '1 hour' FROM generate_series(1, 100000) AS i`,
      );
      const count = () => tx.query<{ seq: number; idx: number }>(
        "SELECT seq_scan AS seq, idx_scan AS idx FROM pg_stat_xact_user_tables WHERE relname = 'rate_limit_hits'",
      );
      const [before] = await count();
      await tx.query("SELECT count(*) FROM rate_limit_take($1::json, $2::timestamptz, 1.0)", [JSON.stringify([]), new Date()]);
      const [after] = await count();
      return { seq: after!.seq - before!.seq, idx: after!.idx - before!.idx };
    });
    expect(scans.seq).toBe(0);
    expect(scans.idx).toBeGreaterThan(0);
  });

  it("the one-argument form, for code deployed before the clock was passed, still takes, on the database's clock", async () => {
    const hit = limiter(1, 60_000);
    const take = () => db.query<{ allowed: boolean }>("SELECT allowed FROM rate_limit_take($1::json)", [JSON.stringify([{ key: hit.key, lim: 1, win: 60_000 }])]);
    expect((await take()).map((row) => row.allowed)).toEqual([true]);
    expect((await takeRateLimits(db, [hit], new Date())).allowed).toBe(false);
    expect((await take()).map((row) => row.allowed)).toEqual([false]);
  });

  it("a prune removes at most 100 expired rows, in one take in ten by default, so no request pays for a large delete", async () => {
    await db.query(
      `INSERT INTO rate_limit_hits (key, hits, expires_at)
       SELECT 'expired:' || i, ARRAY[now() - interval '2 hours'], now() - interval '1 hour' FROM generate_series(1, 250) AS i`,
    );
    const expired = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM rate_limit_hits WHERE key LIKE 'expired:%'"))[0]!.n);
    await db.query("SELECT count(*) FROM rate_limit_take($1::json, $2::timestamptz, 1.0)", [JSON.stringify([]), new Date()]);
    expect(await expired()).toBe(150);
    await db.query("SELECT count(*) FROM rate_limit_take($1::json, $2::timestamptz, 1.0)", [JSON.stringify([]), new Date()]);
    expect(await expired()).toBe(50);
    const defaults = await db.query<{ args: string }>(
      "SELECT pg_get_function_arguments(oid) AS args FROM pg_proc WHERE proname = 'rate_limit_take' ORDER BY pronargs",
    );
    expect(defaults.map((d) => d.args)).toEqual([
      "p_limiters json, p_prune_chance double precision DEFAULT 0.1",
      "p_limiters json, p_now timestamp with time zone, p_prune_chance double precision DEFAULT 0.1",
    ]);
    await db.query("DELETE FROM rate_limit_hits WHERE key LIKE 'expired:%'");
  });

  it("a live row is not pruned", async () => {
    const hit = limiter(3, 60_000);
    await takeRateLimits(db, [hit], new Date());
    await db.query("SELECT count(*) FROM rate_limit_take($1::json, $2::timestamptz, 1.0)", [JSON.stringify([]), new Date()]);
    expect(await db.query("SELECT key FROM rate_limit_hits WHERE key = $1", [hit.key])).toHaveLength(1);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("rate limits shared by processes on postgres", () => {
  it("two processes (separate pools) taking 50 requests in parallel against a limit of 10 admit exactly 10", async () => {
    const postgres = backends.find((b) => b.name === "postgres")!;
    const db = await migratedDatabase(postgres);
    const [a, b] = [await openPostgres(db.url!), await openPostgres(db.url!)];
    try {
      const hit = limiter(10, 60_000);
      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => takeRateLimits(i % 2 ? a : b, [hit], new Date())));
      expect(outcomes.filter((o) => o.allowed)).toHaveLength(10);
      const [row] = await db.query<{ n: number }>("SELECT cardinality(hits) AS n FROM rate_limit_hits WHERE key = $1", [
        hit.key,
      ]);
      expect(row!.n).toBe(10);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await db.close();
    }
  });

  it("two processes taking overlapping actor and IP limiters in opposite order do not deadlock", async () => {
    const postgres = backends.find((b) => b.name === "postgres")!;
    const db = await migratedDatabase(postgres);
    const [a, b] = [await openPostgres(db.url!), await openPostgres(db.url!)];
    try {
      const actor = limiter(1_000, 60_000, "actor");
      const ip = limiter(1_000, 60_000, "ip");
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 ? takeRateLimits(a, [actor, ip], new Date()) : takeRateLimits(b, [ip, actor], new Date()))),
      );
      expect(outcomes.every((o) => o.allowed)).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await db.close();
    }
  });
});
