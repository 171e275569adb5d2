/**
 * The outbox's statements bounded (docs/decisions.md#webhooks): the Data API refuses a result over 1 MiB after the
 * statement has run, so an unbounded give-up would mark events whose log line never comes, an unbounded claim would
 * claim events it never delivers, and an unbounded "redeliver all" would reopen every event and answer 500. A result
 * limit of a few rows stands in for the 1 MiB here, with a batch to match.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, dataApiBackends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { resultLimited } from "../../test/support/result-limited-sql";
import type { LogExtra } from "../observability/logger";
import { sweepOutbox } from "./outbox";
import { redeliver } from "./undelivered-events";

const day = 86_400_000;
const retry = { baseMs: 30_000, capMs: 3_600_000, giveUpMs: day, retentionMs: 30 * day };

const recordingLog = () => {
  const lines: { msg: string; eventId?: unknown }[] = [];
  const at = (msg: string, extra: LogExtra = {}) => void lines.push({ msg, eventId: (extra as Record<string, unknown>).eventId });
  return { lines, log: { info: at, warn: at } };
};

describe.each([...backends, ...dataApiBackends])("the outbox's statements bounded on $name", (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migratedDatabase(backend);
  }, 60_000);
  afterAll(() => db?.close());

  /** `n` open events settled at `at`, their claims lapsed then: a receiver down since. */
  const openEvents = (prefix: string, n: number, at: Date) =>
    db.query(
      `INSERT INTO webhook_events (event_id, app_id, rkey, stage, status, occurred_at, claimed_until, attempts, rounds)
       SELECT gen_random_uuid(), 'alpha', $2 || lpad(i::text, 8, '0'), 'waveform', 'ready', $3::timestamptz, $3::timestamptz, 3, 20
         FROM generate_series(1, $1::int) i`,
      [n, prefix, at.toISOString()],
    );

  it("more events past the give-up age than a batch are each given up and logged once, and none is delivered", async () => {
    const now = new Date();
    await openEvents("3kg", 25, new Date(now.getTime() - 2 * day));
    const { lines, log } = recordingLog();
    const claimed = await sweepOutbox({ sql: resultLimited(db, 10), webhooks: new Map(), retry, log }, now, 100, 10);
    expect(claimed).toBe(0);
    const givenUp = lines.filter((l) => l.msg.startsWith("webhook given up"));
    expect(givenUp).toHaveLength(25);
    expect(new Set(givenUp.map((l) => l.eventId)).size).toBe(25);
    expect(lines.filter((l) => !l.msg.startsWith("webhook given up"))).toEqual([]);
    expect(await db.query(`SELECT outcome, count(*)::int AS n FROM webhook_events WHERE rkey LIKE '3kg%' GROUP BY 1`)).toEqual([{ outcome: "given_up", n: 25 }]);
  });

  it("a sweep claims at most its limit, whatever join the planner picks (hash, merge and sorted joins off: a rescanned semi join)", async () => {
    const now = new Date();
    await openEvents("3kc", 300, new Date(now.getTime() - 60_000));
    const claimed = await db
      .transaction(async (tx) => {
        for (const setting of ["enable_hashjoin", "enable_hashagg", "enable_material", "enable_mergejoin", "enable_sort"]) await tx.query(`SET LOCAL ${setting} = off`);
        const n = await sweepOutbox({ sql: tx, webhooks: new Map(), retry, log: recordingLog().log }, now, 100);
        throw Object.assign(new Error("roll back"), { n });
      })
      .catch((error: { n?: number }) => (error.n === undefined ? Promise.reject(error) : error.n));
    expect(claimed).toBe(100);
  });

  it("redelivering all of a tenant's undelivered events, more than a batch, reopens each once and answers their ids", async () => {
    const now = new Date();
    await openEvents("3kr", 25, new Date(now.getTime() - 2 * day));
    await db.query(`UPDATE webhook_events SET outcome = 'given_up', settled_at = $1::timestamptz WHERE rkey LIKE '3kr%'`, [now.toISOString()]);
    // All of the tenant's: these 25 and what the tests before left undelivered.
    const undelivered = await db.query<{ id: string }>(`SELECT event_id::text AS id FROM webhook_events WHERE app_id = 'alpha' AND outcome IS DISTINCT FROM 'delivered'`);
    const reopened = await redeliver(resultLimited(db, 10), "alpha", undefined, now, 10);
    expect(reopened).toHaveLength(undelivered.length);
    expect(new Set(reopened)).toEqual(new Set(undelivered.map((r) => r.id)));
    expect(await db.query(`SELECT outcome, rounds, count(*)::int AS n FROM webhook_events WHERE rkey LIKE '3kr%' GROUP BY 1, 2`)).toEqual([{ outcome: null, rounds: 0, n: 25 }]);
  });
});
