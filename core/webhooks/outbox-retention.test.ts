/**
 * The outbox's retention (docs/decisions.md#webhooks) against an operator's redelivery of the same event, on two
 * Postgres sessions: an event reopened while the sweep deletes is open when its row is deleted, and stays.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import type { Sql } from "../sql/port";
import { sweepOutbox } from "./outbox";
import { redeliver } from "./undelivered-events";

const day = 86_400_000;
const postgres = backends.find((b) => b.name === "postgres");

describe.skipIf(!postgres)("webhook retention racing a redelivery, on postgres", () => {
  let db: TestDatabase;
  const sessions: pg.Client[] = [];
  beforeAll(async () => {
    db = await migratedDatabase(postgres!);
  });
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.end()));
    await db?.close();
  });
  const session = async (): Promise<{ client: pg.Client; sql: Sql }> => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    sessions.push(client);
    const sql = { query: async (text: string, params?: unknown[]) => (await client.query(text, params as unknown[])).rows } as unknown as Sql;
    return { client, sql };
  };

  it("an event an operator reopens while the sweep deletes old outcomes is not deleted: open events never are", async () => {
    const now = new Date();
    const id = randomUUID();
    const longAgo = new Date(now.getTime() - 31 * day).toISOString();
    await db.query(
      `INSERT INTO webhook_events (event_id, app_id, rkey, stage, status, occurred_at, claimed_until, attempts, outcome, settled_at)
       VALUES ($1, 'alpha', '3kabcdefghijk', 'waveform', 'ready', $2::timestamptz, $2::timestamptz, 1, 'failed', $2::timestamptz)`,
      [id, longAgo],
    );
    const operator = await session();
    const sweeper = await session();
    await operator.client.query("BEGIN");
    expect(await redeliver(operator.sql, "alpha", [id], now)).toEqual([id]);
    const retry = { baseMs: 30_000, capMs: 3_600_000, giveUpMs: day, retentionMs: 30 * day };
    const sweeping = sweepOutbox({ sql: sweeper.sql, webhooks: new Map(), retry, log: { info() {}, warn() {} } }, now);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the delete waits on the reopened row's lock
    await operator.client.query("COMMIT");
    await sweeping;
    // Still there (the same sweep then sent it, to no target here, and recorded that).
    expect(await db.query("SELECT event_id FROM webhook_events WHERE event_id = $1::uuid", [id])).toHaveLength(1);
  });
});
