/**
 * An operator's view of a tenant's webhooks that did not arrive (docs/operations.md, "a tenant whose webhooks
 * fail"): the events still retrying, refused by the receiver, or given up; and their redelivery, which reopens them
 * with a fresh give-up age so the sweep sends each again under its original event id.
 */
import * as z from "zod";
import { isoTimestamp } from "../sql/parse-timestamp";
import type { Sql } from "../sql/port";
import { isAppId } from "../tenancy/app-id";

const appId = z.string().refine(isAppId, "not an appId");

export const listUndeliveredQuerySchema = z.strictObject({
  appId,
  limit: z
    .string()
    .regex(/^\d{1,4}$/, "limit must be an integer from 1 to 1000")
    .transform(Number)
    .pipe(z.number().int().min(1).max(1000))
    .default(100),
});

export const undeliveredEventSchema = z.object({
  eventId: z.string(),
  postId: z.string(),
  stage: z.string(),
  status: z.enum(["ready", "failed", "skipped"]),
  occurredAt: z.string(),
  /** null while the outbox still retries it. */
  outcome: z.enum(["failed", "given_up"]).nullable(),
  attempts: z.number().int(),
  rounds: z.number().int(),
  /** When the sweep tries it next (null once settled). */
  nextAttemptAt: z.string().nullable(),
});

export const listUndeliveredSchema = z.object({ items: z.array(undeliveredEventSchema) });

export const redeliverBodySchema = z.strictObject({
  appId,
  /** Only these events; all of the tenant's undelivered events without it. */
  eventIds: z.array(z.uuid()).min(1).max(1000).optional(),
});

export const redeliveredSchema = z.object({ redelivered: z.number().int(), eventIds: z.array(z.string()) });

const iso = (value: unknown): string | null => (value == null ? null : isoTimestamp(value));

/** The tenant's undelivered events, oldest first. */
export const listUndelivered = async (sql: Sql, app: string, limit: number): Promise<z.infer<typeof undeliveredEventSchema>[]> => {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT event_id AS "eventId", rkey AS "postId", stage, status, occurred_at AS "occurredAt", outcome, attempts, rounds,
            CASE WHEN outcome IS NULL THEN claimed_until END AS "nextAttemptAt"
       FROM webhook_events WHERE app_id = $1 AND outcome IS DISTINCT FROM 'delivered'
      ORDER BY occurred_at, event_id LIMIT $2`,
    [app, limit],
  );
  return rows.map((r) => ({
    eventId: String(r.eventId),
    postId: String(r.postId),
    stage: String(r.stage),
    status: r.status as "ready" | "failed" | "skipped",
    occurredAt: iso(r.occurredAt)!,
    outcome: (r.outcome ?? null) as "failed" | "given_up" | null,
    attempts: Number(r.attempts),
    rounds: Number(r.rounds),
    nextAttemptAt: iso(r.nextAttemptAt),
  }));
};

/** Events one reopening statement takes: its RETURNING stays far under the Data API's 1 MiB. */
export const redeliverBatch = 1000;

/**
 * Reopens the tenant's undelivered events (all, or those named): due at once, with no rounds spent and the give-up
 * age counted from now (one in flight may go twice; the receiver dedupes on its id). Returns the ids reopened. In
 * batches until one comes back short: "all" after a long outage is tens of thousands, past what one Data API answer
 * holds (the statement would commit and the operator get a 500). An event this call reopened (open, its give-up age
 * counted from this very `now`) is not taken again.
 */
export const redeliver = async (sql: Sql, app: string, eventIds: readonly string[] | undefined, now: Date, batch = redeliverBatch): Promise<string[]> => {
  const reopened: string[] = [];
  for (let full = true; full; ) {
    const rows = await sql.query<{ eventId: string }>(
      `WITH pick AS MATERIALIZED (
         SELECT event_id FROM webhook_events
          WHERE app_id = $1 AND outcome IS DISTINCT FROM 'delivered'
            AND ($3::text IS NULL OR event_id = ANY (string_to_array($3::text, ',')::uuid[]))
            AND NOT (outcome IS NULL AND retry_from IS NOT DISTINCT FROM $2::timestamptz AND rounds = 0)
          ORDER BY occurred_at, event_id LIMIT $4 FOR UPDATE)
       UPDATE webhook_events SET outcome = NULL, settled_at = NULL, rounds = 0, retry_from = $2::timestamptz, claimed_until = $2::timestamptz
        WHERE event_id IN (SELECT event_id FROM pick) AND outcome IS DISTINCT FROM 'delivered'
        RETURNING event_id AS "eventId"`,
      [app, now.toISOString(), eventIds ? eventIds.join(",") : null, batch],
    );
    reopened.push(...rows.map((r) => String(r.eventId)));
    full = rows.length >= batch;
  }
  return reopened;
};
