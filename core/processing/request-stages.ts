/**
 * Request-time writes of stage state: one data-modifying CTE chain that upserts the decided stages (a `pending`
 * stage is left as it is) and writes a `skipped` settle's webhook event to the outbox in the same statement.
 * Create embeds it in its insert; PATCH runs it guarded by its author and audio checks.
 */
import type { IdempotencyClaim } from "../idempotency/claim";
import { placeholders } from "../sql/placeholders";
import type { Sql } from "../sql/port";
import { claimMs, eventsFrom, outboxInsert } from "../webhooks/outbox";
import type { ClaimedEvent } from "../webhooks/webhook-event";
import type { StageDecision } from "./stage-state";

export interface StageWrite {
  appId: string;
  rkey: string;
  decisions: readonly StageDecision[];
  now: Date;
  /** Whether the tenant gets webhooks (else no outbox rows). */
  webhooks: boolean;
}

/**
 * CTEs `requested` (the stage rows that changed: stage, status) and `requested_events`, inserting only when the
 * condition `guard` (an SQL boolean over earlier CTEs) holds.
 */
export const requestStagesCtes = (p: ReturnType<typeof placeholders>, write: StageWrite, guard: string): string => {
  const app = p.add(write.appId);
  const rkey = p.add(write.rkey);
  const now = p.add(write.now.toISOString());
  const rows = write.decisions.map((d) => `(${p.add(d.stage)}, ${p.add(d.status)}, ${p.add(d.status === "skipped" ? d.reason : null)})`);
  const values = rows.length ? rows.join(", ") : `(NULL, NULL, NULL)`;
  // A stage's time only moves forward, and its event's occurredAt is that time (the receiver keeps the latest event
  // per stage): the clock was read before the statement, and a pass may have settled the stage since, later.
  // (`s.updated_at` in the event: the source row's, as outboxInsert names it.)
  return `requested AS (
      INSERT INTO post_stages AS s (app_id, rkey, stage, status, reason, updated_at)
      SELECT ${app}, ${rkey}, v.stage::text, v.status::text, v.reason::text, ${now}::timestamptz
        FROM (VALUES ${values}) AS v (stage, status, reason)
       WHERE v.stage IS NOT NULL AND (${guard})
      ON CONFLICT (app_id, rkey, stage) DO UPDATE
         SET status = excluded.status, reason = excluded.reason,
             updated_at = GREATEST(excluded.updated_at, s.updated_at + interval '1 millisecond'),
             generation = s.generation + 1, redispatched = false, lapse_from = NULL
       WHERE s.status <> 'pending'
      RETURNING s.stage, s.status, s.updated_at
    ), requested_events AS (
      ${outboxInsert("requested", {
        appId: app,
        rkey,
        occurredAt: "s.updated_at",
        claimedUntil: p.add(new Date(write.now.getTime() + claimMs).toISOString()),
        enabled: p.add(write.webhooks),
      })}
    )`;
};

export type PatchCheck = { found: false } | { found: true; author: string; hasAudio: boolean };

/**
 * PATCH's write in one statement: the post's author and audio are read, and the stages are written only when
 * `actor` is its author and it has audio, and, under an Idempotency-Key, only while `claim` still holds it (a PATCH
 * stalled past its lease while a retry took the key over writes nothing: `claimLost`), marking the key written. Returns what was found,
 * whether this request made a stage pending (one already pending changes nothing and needs no job: its job is
 * queued or its pass runs it), and the events to deliver.
 */
export const requestStagesIfAuthor = async (
  sql: Sql,
  write: StageWrite & { actor: string; claim?: IdempotencyClaim },
): Promise<{ post: PatchCheck; claimLost: boolean; pending: boolean; events: ClaimedEvent[] }> => {
  const p = placeholders();
  const app = p.add(write.appId);
  const rkey = p.add(write.rkey);
  const actor = p.add(write.actor);
  const held = write.claim ? `held AS (${write.claim.heldClause(p.add)}), ` : "";
  const fence = held ? " AND EXISTS (SELECT 1 FROM held)" : "";
  const guard = `EXISTS (SELECT 1 FROM target WHERE target.author_id = ${actor} AND target.embed_cid IS NOT NULL)${fence}`;
  const ctes = requestStagesCtes(p, write, guard);
  const written = write.claim ? `, written AS (${write.claim.writtenClause(p.add)} AND ${guard})` : "";
  const [row] = await sql.query(
    `WITH ${held}target AS (SELECT author_id, embed_cid FROM posts WHERE app_id = ${app} AND rkey = ${rkey}), ${ctes}${written}
     SELECT (SELECT json_build_object('author', author_id, 'hasAudio', embed_cid IS NOT NULL) FROM target) AS post,
            ${held ? "NOT EXISTS (SELECT 1 FROM held)" : "false"} AS claim_lost,
            (SELECT count(*) FROM requested WHERE status = 'pending') AS pending,
            (SELECT json_agg(e) FROM requested_events e) AS events`,
    p.values,
  );
  const post = row?.post as { author: string; hasAudio: boolean } | null | undefined;
  return {
    post: post ? { found: true, author: post.author, hasAudio: post.hasAudio } : { found: false },
    claimLost: row?.claim_lost === true,
    pending: Number(row?.pending ?? 0) > 0,
    events: eventsFrom(row?.events),
  };
};
