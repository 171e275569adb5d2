/**
 * A job the queue gave up on (3 receives, then the dead-letter queue): its pending stages settle `failed` with
 * `dead_letter`, with their events, so nothing stays pending. Stages that a live lease covers are left to the pass
 * that holds it (docs/decisions.md#dispatch-and-the-worker): it may still be running them, and the sweep covers it
 * if it dies.
 */
import type { Sql } from "../sql/port";
import { claimMs, eventsFrom, outboxInsert } from "../webhooks/outbox";
import type { ClaimedEvent } from "../webhooks/webhook-event";
import type { Job } from "./job";
import type { StageReason } from "./stage-state";

/**
 * Settles every pending stage of a post (optionally only some stages) failed with `reason`, unless a live lease
 * (at `now`) covers the post; one statement. Given `pendingBy` (when a dead-lettered job was sent), only stages that
 * became pending by then (`updated_at`, which a request, a byte change or the sweep's mark sets when it makes a stage
 * pending): a stage requested after it has its own job on the queue, which a dead letter must not fail.
 */
export const failPendingStages = async (
  sql: Sql,
  job: Job,
  reason: StageReason,
  now: Date,
  webhooks: boolean,
  onlyStages?: readonly string[],
  pendingBy?: Date,
): Promise<ClaimedEvent[]> => {
  // The stage's time moves forward from its own, whatever this clock says, and is its event's occurredAt. The lease
  // row is locked first, whatever its lease (as a settle does, so the lock order is one): a takeover committing now
  // is waited for and its live lease seen. Read from the snapshot, the lapsed lease it replaced let the dead letter
  // fail the stages the new pass had just taken up.
  const [row] = await sql.query(
    `WITH lease AS MATERIALIZED (
       SELECT e.lease_until FROM post_enrichment e WHERE e.app_id = $1 AND e.rkey = $2 FOR SHARE
     ), failed AS (
       UPDATE post_stages SET status = 'failed', reason = $3, updated_at = GREATEST($4::timestamptz, updated_at + interval '1 millisecond')
        WHERE app_id = $1 AND rkey = $2 AND status = 'pending' AND ($7::text IS NULL OR stage = ANY (string_to_array($7, ',')))
          AND ($8::timestamptz IS NULL OR updated_at <= $8::timestamptz)
          AND NOT EXISTS (SELECT 1 FROM lease WHERE lease.lease_until > $4::timestamptz)
       RETURNING stage, status, updated_at
     ), events AS (${outboxInsert("failed", { appId: "$1", rkey: "$2", occurredAt: "s.updated_at", claimedUntil: "$5", enabled: "$6" })})
     SELECT (SELECT json_agg(e) FROM events e) AS events`,
    [job.appId, job.postId, reason, now.toISOString(), new Date(now.getTime() + claimMs).toISOString(), webhooks, onlyStages?.join(",") ?? null, pendingBy?.toISOString() ?? null],
  );
  return eventsFrom(row?.events);
};
