import { keyTakenOver, type IdempotencyClaim } from "../idempotency/claim";
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
 * so a post never exists without its replayable answer (and a create stays within its statement budget), and
 * inserts only while the claim is still this request's: one that stalled past its lease while a retry took the key
 * over stores nothing and is answered 409, since its key now answers for the retry's post.
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
  const held = idempotent ? `held AS (${idempotent.claim.heldClause(p.add)}), ` : "";
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
  // One row whatever happened, so a lost claim (held false) is told apart from a taken record key (no rkey).
  const [row] = await sql.query(
    `WITH ${held}inserted AS (
       INSERT INTO posts (app_id, rkey, record, cid, author_id, author_did)
       SELECT ${values.join(", ")}${held ? " WHERE EXISTS (SELECT 1 FROM held)" : ""}
       ON CONFLICT (app_id, rkey) DO NOTHING RETURNING rkey)${complete}${processing}
     SELECT inserted.rkey, ${held ? "EXISTS (SELECT 1 FROM held)" : "true"} AS held${
       processing
         ? `, EXISTS (SELECT 1 FROM requested WHERE status = 'pending') AS pending, (SELECT json_agg(e) FROM requested_events e) AS events`
         : ""
     } FROM (VALUES (1)) AS one (x) LEFT JOIN inserted ON true`,
    p.values,
  );
  if (!row) throw new Error("post insert returned no row");
  if (row.held !== true) throw keyTakenOver();
  if (row.rkey == null) return null;
  return { pending: row.pending === true, events: eventsFrom(row.events) };
};
