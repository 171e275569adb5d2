import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { DomainError } from "../domain-error";
import { countStatements } from "../sql/count-statements";
import { firstRead, type OrderedRead } from "../sql/first-read";
import type { RateLimitOutcome, RateLimitRequest } from "./take-rate-limits";
import { takeWithFirstQuery } from "./take-with-first-query";

/** Rows in an order no plan sorts for it: 2, 1, 3 as written, 1, 2, 3 by `n`. */
const numbers: OrderedRead = { text: "SELECT n, $1::text AS tag FROM (VALUES (2), (1), (3)) AS v(n)", params: ["x"], orderBy: (rows) => `${rows}.n` };
const limiter = (limit: number): RateLimitRequest => ({ name: "actor", key: `read:actor:${randomUUID()}`, limit, windowMs: 60_000 });

describe.each(backends)("a read route's first read on $name", (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migratedDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  const folding = (hits: RateLimitRequest[]) => {
    const outcomes: RateLimitOutcome[] = [];
    const counted = countStatements(db);
    const deferred = takeWithFirstQuery(counted, hits, new Date(), (outcome) => {
      outcomes.push(outcome);
      if (!outcome.allowed) throw new DomainError("RATE_LIMITED", "rate limit exceeded");
    });
    return { sql: deferred.sql, take: deferred.take, outcomes, statements: () => counted.count };
  };

  it("carries the rate-limit take in the read's own statement: one statement, the outcome known, the rows the read's", async () => {
    const read = folding([limiter(5)]);
    expect(await firstRead(read.sql, numbers)).toEqual([{ n: 1, tag: "x" }, { n: 2, tag: "x" }, { n: 3, tag: "x" }]);
    expect(read.statements()).toBe(1);
    expect(read.outcomes.map((o) => [o.allowed, o.results[0]!.remaining])).toEqual([[true, 4]]);
    await read.take(); // already taken: no second statement
    expect(read.statements()).toBe(1);
  });

  it("orders the rows by the read's own ORDER BY, outermost, folded or not", async () => {
    const plain = await firstRead(db, numbers);
    const folded = await firstRead(folding([limiter(5)]).sql, numbers);
    expect(plain.map((row) => row.n)).toEqual([1, 2, 3]);
    expect(folded.map((row) => row.n)).toEqual([1, 2, 3]);
  });

  it("a refused request reads nothing: the first read rejects with the refusal", async () => {
    const hit = limiter(0);
    const read = folding([hit]);
    await expect(firstRead(read.sql, numbers)).rejects.toMatchObject({ code: "RATE_LIMITED" });
    expect(read.outcomes.map((o) => o.allowed)).toEqual([false]);
  });

  it("only the first read folds: any other query waits for a take of its own, a statement before it", async () => {
    const read = folding([limiter(5)]);
    expect(await read.sql.query<{ one: number }>("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect(read.statements()).toBe(2);
    expect(await firstRead(read.sql, numbers)).toHaveLength(3);
    expect(read.statements()).toBe(3);
    expect(read.outcomes).toHaveLength(1);
  });
});
