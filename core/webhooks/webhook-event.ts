import { isoTimestamp } from "../sql/parse-timestamp";

/** A stage settle event (docs/decisions.md#webhooks): what the outbox stores and the body a tenant receives. */
export interface WebhookEvent {
  /** UUID v4, the same on every attempt and every re-delivery. */
  eventId: string;
  appId: string;
  postId: string;
  stage: string;
  status: "ready" | "failed" | "skipped";
  /** ISO 8601 UTC settle time. */
  occurredAt: string;
}

/**
 * An event as a deliverer holds it: with the claim it was taken under (its row's `claimed_until` then), which is
 * not sent. Its outcome is recorded only while the row still holds that claim (outbox.ts).
 */
export interface ClaimedEvent extends WebhookEvent {
  claimedUntil: string;
}

/** The body, fields in the documented order; signed over exactly these bytes. */
export const webhookBody = (event: WebhookEvent): string =>
  JSON.stringify({ postId: event.postId, originAppId: event.appId, stage: event.stage, status: event.status, occurredAt: event.occurredAt });

/** An outbox row as the SQL statements return it (json_build_object keys). */
export const toClaimedEvent = (row: Record<string, unknown>): ClaimedEvent => ({
  eventId: String(row.eventId ?? row.event_id),
  appId: String(row.appId ?? row.app_id),
  postId: String(row.postId ?? row.rkey),
  stage: String(row.stage),
  status: row.status as WebhookEvent["status"],
  occurredAt: isoTimestamp(row.occurredAt ?? row.occurred_at),
  claimedUntil: isoTimestamp(row.claimedUntil ?? row.claimed_until),
});
