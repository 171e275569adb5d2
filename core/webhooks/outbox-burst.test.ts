/**
 * A burst of webhook events (a sweep after an outage settles hundreds of stages at once) goes to the tenant's
 * receiver a bounded number at a time (docs/decisions.md#webhooks), and a delivery that could not end before its
 * claim lapses, or the invocation's time, is left for the sweep rather than sent beside the sweep's own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { startWebhookReceiver } from "../../test/support/webhook-receiver";
import { deliverEvents, eventsFrom, maxDeliveriesInFlight, outboxReturning } from "./outbox";

const retry = { baseMs: 30_000, capMs: 3_600_000, giveUpMs: 86_400_000, retentionMs: 30 * 86_400_000 };
const quiet = { info() {}, warn() {} };

describe("a burst of webhook events", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migratedDatabase(backends[0]!);
  }, 60_000);
  afterAll(() => db?.close());

  /** `n` events of `prefix`, claimed by this deliverer until `claimMs` after `now`. */
  const claimedEvents = async (prefix: string, n: number, now: Date, claimMs: number) =>
    eventsFrom(
      await db.query(
        `INSERT INTO webhook_events (event_id, app_id, rkey, stage, status, occurred_at, claimed_until)
         SELECT gen_random_uuid(), 'alpha', $2 || lpad(i::text, 8, '0'), 'waveform', 'ready', $3::timestamptz, $4::timestamptz
           FROM generate_series(1, $1::int) i
         RETURNING ${outboxReturning}`,
        [n, prefix, now.toISOString(), new Date(now.getTime() + claimMs).toISOString()],
      ),
    );
  const outcomes = (prefix: string) =>
    db.query(`SELECT outcome, count(*)::int AS n FROM webhook_events WHERE rkey LIKE $1 || '%' GROUP BY 1 ORDER BY 1`, [prefix]);

  it("reaches the receiver at most maxDeliveriesInFlight at a time, and every event is delivered", async () => {
    let peak = 0;
    let inFlight = 0;
    const receiver = await startWebhookReceiver(() => {
      peak = Math.max(peak, ++inFlight);
      setTimeout(() => inFlight--, 100);
      return { status: 200, delayMs: 100 };
    });
    try {
      const now = new Date();
      const events = await claimedEvents("3kbu", 60, now, 60_000);
      await deliverEvents({ sql: db, webhooks: new Map([["alpha", { url: receiver.url, secret: "s".repeat(32) }]]), retry, log: quiet, now: () => now }, events);
      expect(receiver.received).toHaveLength(60);
      expect(peak).toBeGreaterThan(1);
      expect(peak).toBeLessThanOrEqual(16);
      expect(maxDeliveriesInFlight).toBe(16);
      expect(await outcomes("3kbu")).toEqual([{ outcome: "delivered", n: 60 }]);
    } finally {
      await receiver.close();
    }
  });

  /**
   * Twenty events of `prefix` claimed for `claimMs`, sent to a receiver that answers at once, under 5 s attempts:
   * every attempt timing out, a delivery would take 3 × 5 s plus 0.2 s of backoff. Answers how many arrived.
   */
  const sendTwenty = async (prefix: string, now: Date, claimMs: number, remainingMs?: () => number) => {
    const receiver = await startWebhookReceiver(() => ({ status: 200 }));
    try {
      const events = await claimedEvents(prefix, 20, now, claimMs);
      const webhooks = new Map([["alpha", { url: receiver.url, secret: "s".repeat(32) }]]);
      await deliverEvents({ sql: db, webhooks, retry, log: quiet, delivery: { timeoutMs: 5_000, backoffMs: [100, 100] }, now: () => now, remainingMs }, events);
      return receiver.received.length;
    } finally {
      await receiver.close();
    }
  };

  it("past the first maxDeliveriesInFlight, an event whose delivery could outlast its claim is not sent: it stays open, its claim as it was, for the sweep", async () => {
    const now = new Date();
    // The 15 s claim is shorter than a delivery could take.
    expect(await sendTwenty("3kbl", now, 15_000)).toBe(16);
    expect(await outcomes("3kbl")).toEqual([{ outcome: "delivered", n: 16 }, { outcome: null, n: 4 }]);
    const left = await db.query<{ claimedUntil: string }>(`SELECT claimed_until AS "claimedUntil" FROM webhook_events WHERE rkey LIKE '3kbl%' AND outcome IS NULL`);
    for (const row of left) expect(new Date(row.claimedUntil).getTime()).toBe(now.getTime() + 15_000);
  });

  it("past the first maxDeliveriesInFlight, none starts that could outlast the invocation's time (a sweep Lambda's): it stays open for the next sweep", async () => {
    // The claim leaves a minute, but the invocation has 10 s left.
    expect(await sendTwenty("3kbr", new Date(), 60_000, () => 10_000)).toBe(16);
    expect(await outcomes("3kbr")).toEqual([{ outcome: "delivered", n: 16 }, { outcome: null, n: 4 }]);
  });
});
