/**
 * The webhook outbox (docs/decisions.md#webhooks): settle statements insert events (see `outboxInsert`), and a
 * deliverer claims them, sends them and records the outcome. A claim lapses after `claimMs`, so events whose
 * deliverer died are sent by the sweep, with the same event id. An event whose quick attempts all failed for want of
 * a working receiver stays open, due again after an exponential backoff, and the sweep keeps trying it until it is
 * delivered or, past the give-up age, given up (logged once).
 */
import type { WebhookRetry, WebhookTarget } from "../config/processing-config";
import { isoTimestamp } from "../sql/parse-timestamp";
import type { Sql } from "../sql/port";
import { deliverWebhook, deliveryDefaults, type DeliveryOptions } from "./deliver-webhook";
import { toClaimedEvent, type ClaimedEvent } from "./webhook-event";
import type { Logger } from "../observability/logger";

/** Longer than one delivery can take (3 attempts of 5 s plus 2.5 s of backoff). */
export const claimMs = 60_000;

/** Columns an outbox insert or claim returns, as json_build_object keys that toClaimedEvent reads. */
export const outboxReturning = `event_id AS "eventId", app_id AS "appId", rkey AS "postId", stage, status, occurred_at AS "occurredAt",
  claimed_until AS "claimedUntil"`;

/**
 * A CTE body inserting one event per row of `source` (a CTE with `stage` and `status` columns) whose status is a
 * settle, claimed by the writer for `claimMs`. `enabled` is the tenant's webhook switch (a parameter).
 */
export const outboxInsert = (source: string, p: { appId: string; rkey: string; occurredAt: string; claimedUntil: string; enabled: string }) =>
  `INSERT INTO webhook_events (event_id, app_id, rkey, stage, status, occurred_at, claimed_until)
   SELECT gen_random_uuid(), ${p.appId}, ${p.rkey}, s.stage, s.status, ${p.occurredAt}::timestamptz, ${p.claimedUntil}::timestamptz
     FROM ${source} s WHERE ${p.enabled}::boolean AND s.status IN ('ready', 'failed', 'skipped')
   RETURNING ${outboxReturning}`;

export const eventsFrom = (rows: unknown): ClaimedEvent[] =>
  Array.isArray(rows) ? rows.map((r) => toClaimedEvent(r as Record<string, unknown>)) : [];

export interface OutboxDeps {
  sql: Sql;
  webhooks: ReadonlyMap<string, WebhookTarget>;
  /** Backoff and give-up age of undelivered events (SVC_WEBHOOK_RETRY_BASE_SECONDS and its neighbours). */
  retry: WebhookRetry;
  log: Pick<Logger, "info" | "warn">;
  delivery?: Partial<DeliveryOptions>;
  /** The clock outcomes and next rounds are recorded by (the pass's, the sweep's); the delivery's otherwise. */
  now?: () => Date;
  /** The time the invocation has left (ms; the sweep's): past the first deliveries, none starts that could outlast it. */
  remainingMs?: () => number;
}

/**
 * A delivery records its outcome only on the event as its claim left it: still open, and still under the claim it
 * was taken with (the `claim` placeholder). An operator's reopen or the sweep's next claim moves `claimed_until`,
 * and a delivery that ends after either (a slow receiver, a frozen Lambda) must not overwrite what came after it.
 */
// $1::uuid: the Data API binds a string as text, and Postgres compares no uuid with text.
const stillClaimed = (claim: string) => `event_id = $1::uuid AND outcome IS NULL AND claimed_until = ${claim}::timestamptz`;

/**
 * The next round is due `min(cap, base * 2^rounds)` after this one (rounds spent before it: 0 after the quick
 * attempts), in SQL so the row's own count decides it.
 */
const retryLater = `UPDATE webhook_events
    SET attempts = attempts + $2, rounds = rounds + 1,
        claimed_until = $3::timestamptz + least($4::double precision, $5::double precision * power(2, least(rounds, 40))) * interval '1 millisecond'
  WHERE ${stillClaimed("$6")}
  RETURNING rounds, claimed_until AS "nextAttemptAt"`;

const recordOutcome = `UPDATE webhook_events SET outcome = $2, attempts = attempts + $3, settled_at = $4::timestamptz
  WHERE ${stillClaimed("$5")}`;

/**
 * Deliveries one call keeps in flight. A sweep after an outage settles hundreds of stages at once, and all their
 * events go to one tenant's receiver: sent all at once, 600 of them on a loaded machine timed out together, and so
 * did their retries, so the burst failed where a steady stream got through.
 */
export const maxDeliveriesInFlight = 16;

/**
 * Sends claimed events, `maxDeliveriesInFlight` at a time, and records each outcome; never throws (a failed delivery
 * never fails the pass). After the first of them, a delivery starts only if it can end, every attempt timing out,
 * before its claim lapses and before the invocation's time runs out (a sweep Lambda's 60 s): one that could not is
 * left as it is, and the sweep sends it once the claim has lapsed, under the same event id, rather than a second
 * deliverer sending it beside this one, or a function killed mid-send.
 */
export const deliverEvents = async (deps: OutboxDeps, events: readonly ClaimedEvent[]): Promise<void> => {
  const options = { ...deliveryDefaults, ...deps.delivery };
  const longestMs = (options.backoffMs.length + 1) * options.timeoutMs + options.backoffMs.reduce((a, b) => a + b, 0);
  // Claims are on the clock outcomes are recorded by (a test's may stand still); time passing here is measured.
  const clockAtStart = (deps.now ?? options.now)().getTime();
  const started = performance.now();
  const inTime = (event: ClaimedEvent) =>
    longestMs <= Math.min(Date.parse(event.claimedUntil) - clockAtStart - (performance.now() - started), deps.remainingMs?.() ?? Infinity);
  const waiting = [...events];
  let sent = 0;
  const sender = async () => {
    for (let event = waiting.shift(); event; event = waiting.shift()) {
      if (sent >= maxDeliveriesInFlight && !inTime(event)) continue;
      sent++;
      await deliverOne(deps, options, event);
    }
  };
  await Promise.all(Array.from({ length: Math.min(maxDeliveriesInFlight, events.length) }, sender));
};

/** One event: delivered, failed, or due again later, recorded under the claim it was sent with. */
const deliverOne = async (deps: OutboxDeps, options: DeliveryOptions, event: ClaimedEvent): Promise<void> => {
  try {
    const target = deps.webhooks.get(event.appId);
    const result = target ? await deliverWebhook(event, target, deps.log, options) : { outcome: "failed" as const, attempts: 0 };
    if (!target) deps.log.warn("webhook dropped: the tenant no longer has a webhook target", { eventId: event.eventId, appId: event.appId });
    const now = (deps.now ?? options.now)();
    if (result.outcome === "failed" && result.later) {
      const [next] = await deps.sql.query<{ rounds: number; nextAttemptAt: unknown }>(retryLater, [
        event.eventId, result.attempts, now.toISOString(), deps.retry.capMs, deps.retry.baseMs, event.claimedUntil,
      ]);
      if (next) deps.log.info("webhook undelivered; tried again later", { eventId: event.eventId, appId: event.appId, rounds: next.rounds, nextAttemptAt: isoTimestamp(next.nextAttemptAt) });
      return;
    }
    await deps.sql.query(recordOutcome, [event.eventId, result.outcome, result.attempts, now.toISOString(), event.claimedUntil]);
  } catch (error) {
    // The claim lapses and the sweep tries again; the receiver dedupes on the event id.
    deps.log.warn("webhook outcome not recorded", { eventId: event.eventId, error: String(error) });
  }
};

/** Events deleted by one sweep at most: a backlog (a first sweep after a long retention) goes over several runs. */
const pruneLimit = 1000;
/** Events one give-up statement takes (about 150 bytes a row returned). */
const giveUpBatch = 1000;

/**
 * Gives up open events older than the give-up age that no deliverer holds, each logged here once (the statement
 * that marks it is the one that reports it); deletes events whose outcome is older than the retention; then claims
 * the events that are due (a lapsed claim, or a retry's time come), earliest due first, and delivers them. Returns
 * how many it claimed.
 */
export const sweepOutbox = async (deps: OutboxDeps, now: Date, limit = 100, batch = giveUpBatch): Promise<number> => {
  // In batches until one comes back short: an unbounded RETURNING over the Data API's 1 MiB would fail after the
  // statement ran, and an event past the age left open would be claimed and delivered below. The LIMIT ... FOR UPDATE
  // SKIP LOCKED is a MATERIALIZED CTE, not an IN subquery: a semi join may rescan that, and each rescan skips the
  // rows the UPDATE already took and locks more, past the limit.
  const givingUp = `outcome IS NULL AND claimed_until <= $1::timestamptz AND coalesce(retry_from, occurred_at) < $2::timestamptz`;
  for (let full = true; full; ) {
    const givenUp = await deps.sql.query<{ eventId: string; appId: string; postId: string; stage: string; attempts: number; rounds: number }>(
      // The condition again outside the CTE, as the DELETE below has it: Postgres rechecks only the outer WHERE.
      `WITH due AS MATERIALIZED (SELECT event_id FROM webhook_events WHERE ${givingUp} ORDER BY claimed_until LIMIT $3 FOR UPDATE SKIP LOCKED)
       UPDATE webhook_events SET outcome = 'given_up', settled_at = $1::timestamptz
        WHERE ${givingUp} AND event_id IN (SELECT event_id FROM due)
        RETURNING event_id AS "eventId", app_id AS "appId", rkey AS "postId", stage, attempts, rounds`,
      [now.toISOString(), new Date(now.getTime() - deps.retry.giveUpMs).toISOString(), batch],
    );
    for (const event of givenUp) deps.log.warn("webhook given up: undelivered past the give-up age", { ...event });
    full = givenUp.length >= batch;
  }
  await deps.sql.query(
    // The condition again outside the subquery: an event an operator reopens meanwhile is open when its row is
    // deleted, and Postgres rechecks only the outer WHERE of a row that changed under the statement.
    `DELETE FROM webhook_events
      WHERE outcome IS NOT NULL AND settled_at < $1::timestamptz
        AND event_id IN (SELECT event_id FROM webhook_events WHERE outcome IS NOT NULL AND settled_at < $1::timestamptz
                          ORDER BY settled_at LIMIT $2)`,
    [new Date(now.getTime() - deps.retry.retentionMs).toISOString(), pruneLimit],
  );
  // MATERIALIZED, as the give-up's: a rescanned IN subquery claimed past its limit (all 5,000 due events in one run).
  const rows = await deps.sql.query(
    `WITH due AS MATERIALIZED (SELECT event_id FROM webhook_events WHERE outcome IS NULL AND claimed_until <= $1::timestamptz
                               ORDER BY claimed_until LIMIT $3 FOR UPDATE SKIP LOCKED)
     UPDATE webhook_events SET claimed_until = $2::timestamptz
      WHERE event_id IN (SELECT event_id FROM due)
      RETURNING ${outboxReturning}`,
    [now.toISOString(), new Date(now.getTime() + claimMs).toISOString(), limit],
  );
  await deliverEvents({ ...deps, now: deps.now ?? (() => now) }, eventsFrom(rows));
  return rows.length;
};
