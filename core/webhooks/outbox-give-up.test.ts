/**
 * The outbox's give-up in bounded batches (docs/decisions.md#webhooks): the Data API refuses a result over 1 MiB
 * after the statement has run, so an unbounded give-up would mark events whose log line never comes. A result
 * limit of a few rows stands in for the 1 MiB here, with a batch to match.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, dataApiBackends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { resultLimited } from "../../test/support/result-limited-sql";
import type { LogExtra } from "../observability/logger";
import { sweepOutbox } from "./outbox";

const day = 86_400_000;
const retry = { baseMs: 30_000, capMs: 3_600_000, giveUpMs: day, retentionMs: 30 * day };

const recordingLog = () => {
  const lines: { msg: string; eventId?: unknown }[] = [];
  const at = (msg: string, extra: LogExtra = {}) => void lines.push({ msg, eventId: (extra as Record<string, unknown>).eventId });
  return { lines, log: { info: at, warn: at } };
};

describe.each([...backends, ...dataApiBackends])("the outbox's give-up in batches on $name", (backend) => {
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
});
