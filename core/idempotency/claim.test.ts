import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, dataApiBackends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { countStatements } from "../sql/count-statements";
import { placeholders } from "../sql/placeholders";
import { openPostgres } from "../sql/postgres";
import {
  claimIdempotencyKey,
  completeIdempotencyClause,
  completeIdempotencyKey,
  heldIdempotencyClause,
  releaseIdempotencyKey,
  writtenIdempotencyClause,
  type HeldKey,
  type IdempotencyOptions,
  type IdempotencyScope,
} from "./claim";

const route = "POST /api/v1/posts";
/** The invocation's clock, which the claims are given: `at(ms)` is that much later than the tests' start. */
const started = Date.now();
const at = (ms = 0) => new Date(started + ms);
const newScope = (over: Partial<IdempotencyScope> = {}): IdempotencyScope => ({
  appId: "app1",
  actor: "did:plc:alice",
  route,
  key: randomUUID(),
  ...over,
});

describe.each([...backends, ...dataApiBackends])("idempotency claims on $name", (backend) => {
  let db: TestDatabase;
  /** Claims a key that must be free, and answers the held key. */
  const claim = async (scope: IdempotencyScope, fingerprint: string, now: Date, options?: IdempotencyOptions): Promise<HeldKey> => {
    const outcome = await claimIdempotencyKey(db, scope, fingerprint, now, options);
    if (outcome.kind !== "claimed") throw new Error(`expected a claim, got ${outcome.kind}`);
    return outcome.held;
  };
  beforeAll(async () => {
    db = await migratedDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("the first request with a key claims it", async () => {
    expect(await claimIdempotencyKey(db, newScope(), "fp1", at())).toMatchObject({ kind: "claimed" });
  });

  it("a claim costs exactly one SQL statement", async () => {
    const counted = countStatements(db);
    await claimIdempotencyKey(counted, newScope(), "fp1", at());
    expect(counted.count).toBe(1);
  });

  it("a sequential duplicate after success replays the stored status and body", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await completeIdempotencyKey(db, held, 201, { postId: "3kabc", nested: { n: 1 } }, at());
    expect(await claimIdempotencyKey(db, scope, "fp1", at())).toEqual({
      kind: "replay",
      status: 201,
      body: { postId: "3kabc", nested: { n: 1 } },
    });
  });

  it("the same key with a different body is a mismatch", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await completeIdempotencyKey(db, held, 201, { postId: "x" }, at());
    expect(await claimIdempotencyKey(db, scope, "fp2", at())).toEqual({ kind: "mismatch" });
  });

  it("a different body while the first request runs is a mismatch, not in-progress", async () => {
    const scope = newScope();
    await claimIdempotencyKey(db, scope, "fp1", at());
    expect(await claimIdempotencyKey(db, scope, "fp2", at())).toEqual({ kind: "mismatch" });
  });

  it("the same key while the first request runs is in progress", async () => {
    const scope = newScope();
    await claimIdempotencyKey(db, scope, "fp1", at());
    expect(await claimIdempotencyKey(db, scope, "fp1", at())).toEqual({ kind: "in-progress" });
  });

  it("a released key can be claimed again, with any body", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await releaseIdempotencyKey(db, held);
    expect(await claimIdempotencyKey(db, scope, "fp2", at())).toMatchObject({ kind: "claimed" });
  });

  it("releasing does not drop a completed result", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await completeIdempotencyKey(db, held, 201, { postId: "x" }, at());
    await releaseIdempotencyKey(db, held);
    expect(await claimIdempotencyKey(db, scope, "fp1", at())).toMatchObject({ kind: "replay" });
  });

  it("keys are kept 24 hours: an expired key can be claimed again", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await completeIdempotencyKey(db, held, 201, { postId: "x" }, at());
    const [row] = await db.query<{ hours: number }>(
      `SELECT round(extract(epoch FROM expires_at - $5::timestamptz) / 3600)::int AS hours FROM idempotency_keys
        WHERE app_id = $1 AND actor = $2 AND route = $3 AND key = $4`,
      [scope.appId, scope.actor, scope.route, scope.key, at().toISOString()],
    );
    expect(row!.hours).toBe(24);
    await db.query(
      `UPDATE idempotency_keys SET expires_at = $5::timestamptz - interval '1 second'
        WHERE app_id = $1 AND actor = $2 AND route = $3 AND key = $4`,
      [scope.appId, scope.actor, scope.route, scope.key, at().toISOString()],
    );
    expect(await claimIdempotencyKey(db, scope, "fp2", at())).toMatchObject({ kind: "claimed" });
  });

  it("a key with a short injected lifetime expires after it", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at(), { ttlMs: 60_000 });
    await completeIdempotencyKey(db, held, 201, { postId: "x" }, at(), { ttlMs: 500 });
    expect(await claimIdempotencyKey(db, scope, "fp1", at(499))).toMatchObject({ kind: "replay" });
    expect(await claimIdempotencyKey(db, scope, "fp1", at(500))).toMatchObject({ kind: "claimed" });
  });

  it("a running claim whose lease lapsed (its process died) can be taken over", async () => {
    const scope = newScope();
    await claimIdempotencyKey(db, scope, "fp1", at(), { leaseMs: 500 });
    expect(await claimIdempotencyKey(db, scope, "fp1", at(499))).toEqual({ kind: "in-progress" });
    expect(await claimIdempotencyKey(db, scope, "fp1", at(500))).toMatchObject({ kind: "claimed" });
    // The new claim has a fresh lease.
    expect(await claimIdempotencyKey(db, scope, "fp1", at(1_000))).toEqual({ kind: "in-progress" });
  });

  it("scopes isolate: the same key under another tenant, actor or route is a separate claim", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await completeIdempotencyKey(db, held, 201, { postId: "x" }, at());
    expect(await claimIdempotencyKey(db, { ...scope, appId: "app2" }, "fp2", at())).toMatchObject({ kind: "claimed" });
    expect(await claimIdempotencyKey(db, { ...scope, actor: "did:plc:bob" }, "fp2", at())).toMatchObject({ kind: "claimed" });
    expect(await claimIdempotencyKey(db, { ...scope, route: "PATCH /api/v1/posts/{postId}" }, "fp2", at())).toMatchObject({
      kind: "claimed",
    });
  });

  it("50 parallel claims of one key yield exactly one claimed", async () => {
    const scope = newScope();
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => claimIdempotencyKey(db, scope, "fp1", at())));
    expect(outcomes.filter((o) => o.kind === "claimed")).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind !== "claimed").every((o) => o.kind === "in-progress")).toBe(true);
  });

  it("50 parallel claims of an expired key yield exactly one claimed", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await completeIdempotencyKey(db, held, 201, { postId: "old" }, at(), { ttlMs: 1 });
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => claimIdempotencyKey(db, scope, "fp1", at(1))));
    expect(outcomes.filter((o) => o.kind === "claimed")).toHaveLength(1);
    expect(outcomes.some((o) => o.kind === "replay")).toBe(false);
  });

  it("claims now and then delete expired keys, never live ones", async () => {
    const expired = newScope();
    const live = newScope();
    await claimIdempotencyKey(db, expired, "fp1", at(), { ttlMs: 1 });
    await claimIdempotencyKey(db, live, "fp1", at());
    await claimIdempotencyKey(db, newScope(), "fp1", at(2), { pruneChance: 1 });
    const keys = (await db.query<{ key: string }>("SELECT key FROM idempotency_keys")).map((r) => r.key);
    expect(keys).not.toContain(expired.key);
    expect(keys).toContain(live.key);
  });

  it("the completion clause embeds in the statement that does the work", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    const p = placeholders();
    const marker = p.add("done-by-cte");
    const text = `WITH done AS (${completeIdempotencyClause(p.add, held, 201, { postId: "cte" }, at())} RETURNING 1)
      SELECT ${marker}::text AS marker, (SELECT count(*) FROM done)::int AS completed`;
    expect(await db.query(text, p.values)).toEqual([{ marker: "done-by-cte", completed: 1 }]);
    expect(await claimIdempotencyKey(db, scope, "fp1", at())).toEqual({ kind: "replay", status: 201, body: { postId: "cte" } });
  });

  it("completion only applies to a running claim", async () => {
    const scope = newScope();
    await completeIdempotencyKey(db, { ...scope, lockedUntil: at(60_000).toISOString() }, 201, { postId: "ghost" }, at());
    expect(await claimIdempotencyKey(db, scope, "fp1", at())).toMatchObject({ kind: "claimed" });
  });

  it("a claim taken over after its lease lapsed is no longer the first holder's to release or complete", async () => {
    const scope = newScope();
    const first = await claim(scope, "fp1", at(), { leaseMs: 500 });
    const second = await claim(scope, "fp1", at(500));
    // The first request, stalled past its lease, fails late: the key stays with the second.
    await releaseIdempotencyKey(db, first);
    expect(await claimIdempotencyKey(db, scope, "fp1", at(600))).toEqual({ kind: "in-progress" });
    // Nor does its late success answer for the second.
    await completeIdempotencyKey(db, first, 201, { postId: "first" }, at(700));
    expect(await claimIdempotencyKey(db, scope, "fp1", at(800))).toEqual({ kind: "in-progress" });
    await completeIdempotencyKey(db, second, 201, { postId: "second" }, at(900));
    expect(await claimIdempotencyKey(db, scope, "fp1", at(1_000))).toEqual({ kind: "replay", status: 201, body: { postId: "second" } });
  });

  /** Marks the held key written, as a write that cannot store its answer in its own statement does. */
  const markWritten = async (held: HeldKey, status = 202) => {
    const p = placeholders();
    await db.query(`WITH written AS (${writtenIdempotencyClause(p.add, held, status)} AND true) SELECT 1`, p.values);
  };

  it("a claim whose write was marked and whose request died is taken over as written: the taker answers without writing again", async () => {
    const scope = newScope();
    const first = await claim(scope, "fp1", at(), { leaseMs: 500 });
    expect(await claimIdempotencyKey(db, newScope(), "fp1", at())).toMatchObject({ kind: "claimed", written: false });
    await markWritten(first);
    // Still the first request's while its lease runs.
    expect(await claimIdempotencyKey(db, scope, "fp1", at(499))).toEqual({ kind: "in-progress" });
    const taken = await claimIdempotencyKey(db, scope, "fp1", at(500));
    expect(taken).toMatchObject({ kind: "claimed", written: true });
    // The taker's answer is the key's answer from then on.
    if (taken.kind !== "claimed") throw new Error("expected a claim");
    await completeIdempotencyKey(db, taken.held, 202, { answered: "by the taker" }, at(600));
    expect(await claimIdempotencyKey(db, scope, "fp1", at(700))).toEqual({ kind: "replay", status: 202, body: { answered: "by the taker" } });
  });

  it("a written mark passes only to the same body, and not past the key's lifetime: another body, or an expired key, starts afresh", async () => {
    const other = newScope();
    await markWritten(await claim(other, "fp1", at(), { leaseMs: 500 }));
    expect(await claimIdempotencyKey(db, other, "fp2", at(500))).toMatchObject({ kind: "claimed", written: false });
    const expired = newScope();
    await markWritten(await claim(expired, "fp1", at(), { leaseMs: 500, ttlMs: 1_000 }));
    expect(await claimIdempotencyKey(db, expired, "fp1", at(1_000))).toMatchObject({ kind: "claimed", written: false });
  });

  it("releasing a claim marked written ends its lease instead of deleting it: the next request takes it over at once, as written", async () => {
    const scope = newScope();
    const held = await claim(scope, "fp1", at());
    await markWritten(held);
    await releaseIdempotencyKey(db, held);
    expect(await claimIdempotencyKey(db, scope, "fp1", at(1))).toMatchObject({ kind: "claimed", written: true });
    // Unmarked, a release frees the key outright, whatever the next body.
    const plain = newScope();
    await releaseIdempotencyKey(db, await claim(plain, "fp1", at()));
    expect(await claimIdempotencyKey(db, plain, "fp2", at(1))).toMatchObject({ kind: "claimed", written: false });
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("idempotency claims shared by processes on postgres", () => {
  it("50 parallel claims of one key from two processes (separate pools) yield exactly one claimed", async () => {
    const postgres = backends.find((b) => b.name === "postgres")!;
    const db = await migratedDatabase(postgres);
    const [a, b] = [await openPostgres(db.url!), await openPostgres(db.url!)];
    try {
      const scope = newScope();
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, i) => claimIdempotencyKey(i % 2 ? a : b, scope, "fp1", at())),
      );
      expect(outcomes.filter((o) => o.kind === "claimed")).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === "in-progress")).toHaveLength(49);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await db.close();
    }
  });

  it("a different body arriving while the first claim commits is a mismatch, not in-progress; the same body is in progress", async () => {
    const postgres = backends.find((b) => b.name === "postgres")!;
    const db = await migratedDatabase(postgres);
    const [a, b] = [await openPostgres(db.url!), await openPostgres(db.url!)];
    try {
      const [scope, sameScope] = [newScope(), newScope()];
      const racing: Promise<unknown>[] = [];
      await a.transaction(async (tx) => {
        expect(await claimIdempotencyKey(tx, scope, "fp1", at())).toMatchObject({ kind: "claimed" });
        expect(await claimIdempotencyKey(tx, sameScope, "fp1", at())).toMatchObject({ kind: "claimed" });
        // Their inserts wait for this transaction's rows, so each claim's snapshot predates the commit below.
        racing.push(claimIdempotencyKey(b, scope, "fp2", at()), claimIdempotencyKey(b, sameScope, "fp1", at()));
        await new Promise((r) => setTimeout(r, 300));
      });
      expect(await Promise.all(racing)).toEqual([{ kind: "mismatch" }, { kind: "in-progress" }]);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await db.close();
    }
  });

  it("a write fenced by the held clause holds off a takeover until it commits: its post and answer land, never beside another's", async () => {
    const postgres = backends.find((b) => b.name === "postgres")!;
    const db = await migratedDatabase(postgres);
    const [a, b] = [await openPostgres(db.url!), await openPostgres(db.url!)];
    try {
      const scope = newScope();
      const outcome = await claimIdempotencyKey(a, scope, "fp1", at(), { leaseMs: 500 });
      if (outcome.kind !== "claimed") throw new Error(`expected a claim, got ${outcome.kind}`);
      let takeover: Promise<unknown> | undefined;
      await a.transaction(async (tx) => {
        const p = placeholders();
        const [row] = await tx.query(`WITH held AS (${heldIdempotencyClause(p.add, outcome.held)}) SELECT count(*)::int AS n FROM held`, p.values);
        expect(row).toEqual({ n: 1 });
        // Past the lease: unfenced, this retry would take the key over while the write is still in flight.
        takeover = claimIdempotencyKey(b, scope, "fp1", at(1_000));
        await new Promise((r) => setTimeout(r, 300));
        await completeIdempotencyKey(tx, outcome.held, 201, { postId: "first" }, at(1_000));
      });
      expect(await takeover).not.toMatchObject({ kind: "claimed" });
      expect(await claimIdempotencyKey(b, scope, "fp1", at(1_100))).toEqual({ kind: "replay", status: 201, body: { postId: "first" } });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await db.close();
    }
  });
});
