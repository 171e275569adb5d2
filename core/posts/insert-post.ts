import type { IdempotencyClaim } from "../idempotency/claim";
import type { PostRecord } from "../records/post-schema";
import { requestStagesCtes, type StageWrite } from "../processing/request-stages";
import type { Sql } from "../sql/port";
import { placeholders } from "../sql/placeholders";
import { eventsFrom } from "../webhooks/outbox";
import type { ClaimedEvent } from "../webhooks/webhook-event";

export interface NewPost {
  appId: string;
  rkey: string;
  record: PostRecord;
  cid: string;
  authorId: string;
  authorDid: string | null;
}

/**
 * Inserts a post; when the request holds an idempotency claim, the same statement stores the answer under it,
 * so a post never exists without its replayable answer (and a create stays within its statement budget).
 * Requested processing stages (and the outbox events of those skipped) are written by the same statement too.
 * Returns null when the record key is taken (a TID collision: the caller draws a new one).
 */
export const insertPost = async (
  sql: Sql,
  post: NewPost,
  idempotent?: { claim: IdempotencyClaim; answer: unknown },
  stages?: Omit<StageWrite, "appId" | "rkey">,
): Promise<{ pending: boolean; events: ClaimedEvent[] } | null> => {
  const p = placeholders();
  const values = [post.appId, post.rkey, JSON.stringify(post.record), post.cid, post.authorId, post.authorDid].map((v, i) =>
    i === 2 ? `${p.add(v)}::json` : p.add(v),
  );
  const complete = idempotent
    ? `, done AS (${idempotent.claim.completeClause(p.add, idempotent.answer)}
         AND EXISTS (SELECT 1 FROM inserted))`
    : "";
  const processing = stages?.decisions.length
    ? `, ${requestStagesCtes(p, { ...stages, appId: post.appId, rkey: post.rkey }, "EXISTS (SELECT 1 FROM inserted)")}`
    : "";
  const rows = await sql.query(
    `WITH inserted AS (
       INSERT INTO posts (app_id, rkey, record, cid, author_id, author_did) VALUES (${values.join(", ")})
       ON CONFLICT (app_id, rkey) DO NOTHING RETURNING rkey)${complete}${processing}
     SELECT rkey${
       processing
         ? `, EXISTS (SELECT 1 FROM requested WHERE status = 'pending') AS pending, (SELECT json_agg(e) FROM requested_events e) AS events`
         : ""
     } FROM inserted`,
    p.values,
  );
  if (rows.length === 0) return null;
  return { pending: rows[0]!.pending === true, events: eventsFrom(rows[0]!.events) };
};
