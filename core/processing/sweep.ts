/**
 * Nothing stays pending (docs/decisions.md#processing): a `pending` stage lapses when the lease of the pass that had
 * it lapsed (its holder stopped renewing: it died), or when no pass has held its post's lease for 15 minutes since
 * it was queued (its job was lost).
 * On its first lapse it is dispatched again; lapsing again, it settles `failed` with `timeout`. The sweep also
 * delivers outbox events whose deliverer is gone or whose retry is due, with their original event ids, and gives up
 * those past the give-up age (docs/decisions.md#webhooks). On AWS a scheduled function runs it; on a Node host a
 * timer (SVC_SWEEP_INTERVAL_MS).
 */
import type { WebhookRetry, WebhookTarget } from "../config/processing-config";
import type { Sql } from "../sql/port";
import type { DeliveryOptions } from "../webhooks/deliver-webhook";
import { toClaimedEvent, type ClaimedEvent } from "../webhooks/webhook-event";
import { claimMs, deliverEvents, outboxReturning, sweepOutbox } from "../webhooks/outbox";
import type { Dispatcher } from "./dispatcher";
import type { Job } from "./job";
import type { Logger } from "../observability/logger";

/** How long a stage no pass has leased may wait for its job (a queue's backlog) before it counts as lost. */
export const pendingLapseMs = 15 * 60_000;

/**
 * How long a lapsed stage's sweeps keep trying to dispatch it again. A dispatcher that keeps failing (a queue
 * deleted, its access denied) would otherwise keep it pending for ever; past this, the mark stays although the send
 * failed, and the next lapse settles it `failed` (`timeout`).
 */
export const redispatchTriesMs = 4 * pendingLapseMs;

export interface SweepDeps {
  sql: Sql;
  dispatcher: Dispatcher;
  webhooks: ReadonlyMap<string, WebhookTarget>;
  /** How undelivered events are retried and when given up: the sweep drives both. */
  retry: WebhookRetry;
  log: Pick<Logger, "info" | "warn" | "error">;
  delivery?: Partial<DeliveryOptions>;
  /** Rows a statement takes at most (`sweepBatch`; the outbox's give-up its own); a test passes a small one. */
  batch?: number;
  /**
   * The time the run has left (ms): a Lambda's remaining time, or 0 once a Node host is stopping. Without it the
   * run is unbounded. Killed mid-send, a run would leave marks unsent, and they would time out unsent.
   */
  remainingMs?: () => number;
}

/**
 * A send is started only with this much time left: one send's own bound (the SQS client gives up on a call within
 * about 5 s, core/dispatch/sqs-client.ts), then the one statement that takes back the batch's unsent marks.
 */
export const sendReserveMs = 8_000;

/**
 * A batch is marked only with this much time left: its marking statement (a Data API call, seconds at worst) and
 * then `sendReserveMs` for its first send. Past that each send checks for itself, and the marks it has no time to
 * send are taken back, so a batch never outlives the run however its sends go.
 */
export const markMarginMs = 15_000;

/**
 * Every RETURNING of the sweep is bounded: the Data API refuses a result over 1 MiB after the statement has run, and
 * a first-lapse mark returned to nobody would time the stage out unsent. 500 stages (a timeout's event is about 250
 * bytes), or the whole posts of 500 (five stages at most, about 60 bytes a row), are well under that.
 */
export const sweepBatch = 500;

export interface SweepResult {
  redispatched: number;
  timedOut: number;
  delivered: number;
}

/** No pass holds the post's lease now ($1), and none let go of it since $2: the job is not between two attempts. */
const noLeaseSince = `NOT EXISTS (SELECT 1 FROM post_enrichment e WHERE e.app_id = s.app_id AND e.rkey = s.rkey
                        AND (e.lease_until > $1::timestamptz OR e.released_at >= $2::timestamptz))`;
/**
 * When the stage was last queued, or dispatched again by a first lapse: its lapse clock. Kept apart from its time
 * (`updated_at`, the view's `updatedAt`), which moves only when the stage does.
 */
const queuedAt = `coalesce(s.lapse_from, s.updated_at)`;
/**
 * The stage's lapse, at $1 with $2 fifteen minutes earlier: a lease that lapsed since the stage was last queued (a
 * released lease is NULL, a live one later than $1, one older than the stage no pass of it), or queued before $2
 * and no pass has held the post's lease since (one that asked for a retry let go of it seconds ago).
 */
const lapsed = `(EXISTS (SELECT 1 FROM post_enrichment e WHERE e.app_id = s.app_id AND e.rkey = s.rkey
                    AND e.lease_until <= $1::timestamptz AND e.lease_until >= ${queuedAt})
                 OR (${queuedAt} < $2::timestamptz AND ${noLeaseSince}))`;

export const sweep = async (deps: SweepDeps, now: Date): Promise<SweepResult> => {
  const { sql } = deps;
  const batch = deps.batch ?? sweepBatch;
  const left = deps.remainingMs ?? (() => Infinity);
  const at = now.toISOString();
  const lapsedBefore = new Date(now.getTime() - pendingLapseMs).toISOString();
  /**
   * A CTE of at most `batch` lapsed stages ($n is the limit), earliest queued first, skipping rows another sweep
   * holds. MATERIALIZED: as an IN subquery a semi join may rescan it, each rescan locking more rows past the limit.
   */
  const picked = (columns: string, redispatched: boolean, n: string) =>
    `picked AS MATERIALIZED (SELECT ${columns} FROM post_stages s WHERE s.status = 'pending' AND ${redispatched ? "" : "NOT "}s.redispatched
       AND ${lapsed} ORDER BY ${queuedAt} LIMIT ${n} FOR UPDATE SKIP LOCKED)`;

  // Second lapse: settle failed (timeout), with events for tenants that get webhooks, in one statement a batch of
  // stages, until a batch comes back short. The stage's time moves forward from its own (never back, were this
  // clock behind the one that queued it), and is its event's occurredAt. The events come back a row each, every
  // row carrying the batch's count (one row when there are none): aggregated into one row, a batch's 500 events
  // (about 110 KB) passed the Data API's 64 KB a row, and the run failed after its statement had committed.
  let timedOut = 0;
  const timeoutEvents: ClaimedEvent[] = [];
  for (let full = true; full; ) {
    const rows = await sql.query<Record<string, unknown> & { failed: number | string }>(
      `WITH ${picked("s.app_id, s.rkey, s.stage", true, "$5")}, failed AS (
         UPDATE post_stages s SET status = 'failed', reason = 'timeout', updated_at = GREATEST($1::timestamptz, s.updated_at + interval '1 millisecond')
          WHERE s.status = 'pending' AND s.redispatched AND ${lapsed} AND (s.app_id, s.rkey, s.stage) IN (SELECT * FROM picked)
         RETURNING s.app_id, s.rkey, s.stage, s.status, s.updated_at
       ), events AS (
         INSERT INTO webhook_events (event_id, app_id, rkey, stage, status, occurred_at, claimed_until)
         SELECT gen_random_uuid(), f.app_id, f.rkey, f.stage, f.status, f.updated_at, $3::timestamptz
           FROM failed f WHERE f.app_id = ANY (string_to_array($4, ','))
         RETURNING ${outboxReturning}
       )
       SELECT f.failed, e.* FROM (SELECT count(*) AS failed FROM failed) f LEFT JOIN events e ON true`,
      [at, lapsedBefore, new Date(now.getTime() + claimMs).toISOString(), [...deps.webhooks.keys()].join(","), batch],
    );
    const events = rows.filter((row) => row.eventId != null).map(toClaimedEvent);
    for (const event of events) deps.log.warn("stage timed out", { appId: event.appId, postId: event.postId, stage: event.stage });
    timeoutEvents.push(...events);
    const failed = Number(rows[0]?.failed ?? 0);
    timedOut += failed;
    full = failed >= batch;
  }

  // First lapse: mark it, clear the lapsed lease (so only a lease taken after this counts as the next lapse), and
  // dispatch the post again. Whole posts a batch, each batch sent before the next is marked, until one comes back
  // short. A failed dispatch ends the run after its batch (its stages, unmarked, would come straight back): the rest
  // go at the next run. So does the run's time running short (`markMarginMs`, `sendReserveMs`).
  // Lock order: a pass's settle takes the post's lease row, then its stage rows; this statement takes the stage rows
  // first (`picked`), so it must never wait on a lease row, or it and a settle deadlock. `held` takes them SKIP
  // LOCKED: a post whose lease row is taken (its pass settling or renewing right now, so not dead) is neither marked
  // nor cleared and waits for the next run, so a mark always comes with its lapsed lease cleared. Skipped posts may
  // bring a batch back short, which ends this run's marking: the rest go at the next run.
  let redispatched = 0;
  for (let full = true, sent = true; full && sent; ) {
    if (left() < markMarginMs) {
      deps.log.info("sweep stopped marking for want of time; the next run takes the rest", { remainingMs: left() });
      break;
    }
    const firstLapse = await sql.query<{ app_id: string; rkey: string; stage: string; was: string }>(
      `WITH ${picked("s.app_id, s.rkey", false, "$3")}, held AS MATERIALIZED (
         SELECT e.app_id, e.rkey FROM post_enrichment e WHERE (e.app_id, e.rkey) IN (SELECT * FROM picked) FOR NO KEY UPDATE SKIP LOCKED
       ), lapsed_posts AS MATERIALIZED (
         SELECT DISTINCT k.app_id, k.rkey FROM picked k
          WHERE (k.app_id, k.rkey) IN (SELECT * FROM held)
             OR NOT EXISTS (SELECT 1 FROM post_enrichment e WHERE e.app_id = k.app_id AND e.rkey = k.rkey)
       ), marked AS (
         UPDATE post_stages s SET redispatched = true, lapse_from = $1::timestamptz
           FROM post_stages o
          WHERE o.app_id = s.app_id AND o.rkey = s.rkey AND o.stage = s.stage
            AND s.status = 'pending' AND NOT s.redispatched AND ${lapsed} AND (s.app_id, s.rkey) IN (SELECT * FROM lapsed_posts)
         RETURNING s.app_id, s.rkey, s.stage, coalesce(o.lapse_from, o.updated_at) AS was
       ), cleared AS (
         UPDATE post_enrichment e SET lease_token = NULL, lease_until = NULL
          WHERE e.lease_until <= $1::timestamptz AND (e.app_id, e.rkey) IN (SELECT * FROM held)
            AND EXISTS (SELECT 1 FROM marked m WHERE m.app_id = e.app_id AND m.rkey = e.rkey)
         RETURNING 1
       )
       SELECT app_id, rkey, stage, was FROM marked`,
      [at, lapsedBefore, batch],
    );
    // Fewer than a batch: every lapsed stage was taken (a full batch of stages takes as many rows or more).
    full = firstLapse.length >= batch;
    const posts = new Map<string, { job: Job; stages: { stage: string; was: string }[] }>();
    for (const r of firstLapse) {
      const post = posts.get(`${r.app_id}/${r.rkey}`) ?? { job: { appId: r.app_id, postId: r.rkey }, stages: [] };
      post.stages.push({ stage: r.stage, was: new Date(r.was).toISOString() });
      posts.set(`${r.app_id}/${r.rkey}`, post);
    }
    const toSend = [...posts.values()];
    for (const [i, { job, stages }] of toSend.entries()) {
      if (left() < sendReserveMs) {
        // Never tried: every mark goes back, whatever its stage's age, and the next run sends them.
        sent = false;
        const rest = toSend.slice(i);
        deps.log.warn("sweep ran out of time mid-batch; its unsent marks are taken back", { posts: rest.length, remainingMs: left() });
        await unmark(sql, rest, at).catch((undo: unknown) => deps.log.error("sweep could not take back its marks", { posts: rest.length, error: String(undo) }));
        break;
      }
      try {
        await deps.dispatcher.dispatch(job);
        redispatched += 1;
      } catch (error) {
        // Not sent: the mark goes, so a later sweep sends it again rather than time it out unsent, while the stage
        // is young enough to keep trying (redispatchTriesMs).
        sent = false;
        deps.log.error("sweep could not dispatch a lapsed job; a later sweep tries again", { ...job, error: String(error) });
        const since = new Date(now.getTime() - redispatchTriesMs).toISOString();
        await unmark(sql, [{ job, stages }], at, since).catch((undo: unknown) => deps.log.error("sweep could not take back its mark", { ...job, error: String(undo) }));
      }
    }
  }

  const outbox = { sql, webhooks: deps.webhooks, retry: deps.retry, log: deps.log, delivery: deps.delivery, now: () => now, remainingMs: left };
  await deliverEvents(outbox, timeoutEvents);
  const delivered = await sweepOutbox(outbox, now, 100, deps.batch);
  return { redispatched, timedOut, delivered };
};

/**
 * First lapses' marks taken back, each stage's lapse clock to what it was, where nothing has queued the stage since
 * and, given `since`, that time is after it (a stage queued before it has waited long enough: it keeps its mark).
 * One statement.
 */
const unmark = (sql: Sql, posts: { job: Job; stages: { stage: string; was: string }[] }[], at: string, since?: string) =>
  sql.query(
    `UPDATE post_stages s SET redispatched = false, lapse_from = NULLIF(m.was, s.updated_at)
       FROM json_to_recordset($1::json) AS m(app_id text, rkey text, stage text, was timestamptz)
      WHERE s.app_id = m.app_id AND s.rkey = m.rkey AND s.stage = m.stage AND s.status = 'pending' AND s.redispatched
        AND s.lapse_from = $2::timestamptz AND ($3::timestamptz IS NULL OR m.was > $3::timestamptz)`,
    [JSON.stringify(posts.flatMap(({ job, stages }) => stages.map((st) => ({ app_id: job.appId, rkey: job.postId, ...st })))), at, since ?? null],
  );
