/**
 * The webhook outbox: settle statements insert events (see `outboxInsert`), and a deliverer claims them, sends
 * them and records the outcome. A claim lapses after `claimMs`, so events whose deliverer died are sent by the
 * sweep, with the same event id.
 */
import type { WebhookTarget } from "../config/processing-config";
import type { Sql } from "../sql/port";
import { deliverWebhook, deliveryDefaults, type DeliveryOptions } from "./deliver-webhook";
import { toWebhookEvent, type WebhookEvent } from "./webhook-event";
import type { Logger } from "../observability/logger";

/** Longer than one delivery can take (3 attempts of 5 s plus 2.5 s of backoff). */
export const claimMs = 60_000;

/** Columns an outbox insert returns, as json_build_object keys that toWebhookEvent reads. */
export const outboxReturning = `event_id AS "eventId", app_id AS "appId", rkey AS "postId", stage, status, occurred_at AS "occurredAt"`;

/**
 * A CTE body inserting one event per row of `source` (a CTE with `stage` and `status` columns) whose status is a
 * settle, claimed by the writer for `claimMs`. `enabled` is the tenant's webhook switch (a parameter).
 */
export const outboxInsert = (source: string, p: { appId: string; rkey: string; occurredAt: string; claimedUntil: string; enabled: string }) =>
  `INSERT INTO webhook_events (event_id, app_id, rkey, stage, status, occurred_at, claimed_until)
   SELECT gen_random_uuid(), ${p.appId}, ${p.rkey}, s.stage, s.status, ${p.occurredAt}::timestamptz, ${p.claimedUntil}::timestamptz
     FROM ${source} s WHERE ${p.enabled}::boolean AND s.status IN ('ready', 'failed', 'skipped')
   RETURNING ${outboxReturning}`;

export const eventsFrom = (rows: unknown): WebhookEvent[] =>
  Array.isArray(rows) ? rows.map((r) => toWebhookEvent(r as Record<string, unknown>)) : [];

export interface OutboxDeps {
  sql: Sql;
  webhooks: ReadonlyMap<string, WebhookTarget>;
  log: Pick<Logger, "info" | "warn">;
  delivery?: Partial<DeliveryOptions>;
}

/** Sends claimed events and records each outcome; never throws (a failed delivery never fails the pass). */
export const deliverEvents = async (deps: OutboxDeps, events: readonly WebhookEvent[]): Promise<void> => {
  await Promise.all(
    events.map(async (event) => {
      try {
        const target = deps.webhooks.get(event.appId);
        const result = target
          ? await deliverWebhook(event, target, deps.log, { ...deliveryDefaults, ...deps.delivery })
          : { outcome: "failed" as const, attempts: 0 };
        if (!target) deps.log.warn("webhook dropped: the tenant no longer has a webhook target", { eventId: event.eventId, appId: event.appId });
        const now = (deps.delivery?.now ?? deliveryDefaults.now)();
        await deps.sql.query(
          `UPDATE webhook_events SET outcome = $2, attempts = attempts + $3, settled_at = $4::timestamptz WHERE event_id = $1`,
          [event.eventId, result.outcome, result.attempts, now.toISOString()],
        );
      } catch (error) {
        // The claim lapses and the sweep tries again; the receiver dedupes on the event id.
        deps.log.warn("webhook outcome not recorded", { eventId: event.eventId, error: String(error) });
      }
    }),
  );
};

/** Claims events whose deliverer is gone (claim lapsed, no outcome) and delivers them. Returns how many. */
export const sweepOutbox = async (deps: OutboxDeps, now: Date, limit = 100): Promise<number> => {
  const rows = await deps.sql.query(
    `UPDATE webhook_events SET claimed_until = $2::timestamptz
      WHERE event_id IN (SELECT event_id FROM webhook_events WHERE outcome IS NULL AND claimed_until < $1::timestamptz
                          ORDER BY occurred_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING ${outboxReturning}`,
    [now.toISOString(), new Date(now.getTime() + claimMs).toISOString(), limit],
  );
  await deliverEvents(deps, eventsFrom(rows));
  return rows.length;
};
