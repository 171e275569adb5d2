import { DomainError, validationError } from "../domain-error";
import type { IdempotencyClaim } from "../idempotency/claim";
import { parsePostUri } from "../records/at-uri";
import { buildPostRecord, type CreatePostBody, type PostRecord } from "../records/post-schema";
import { recordCid } from "../records/record-cid";
import { nextTid, tidTime } from "../records/tid";
import type { Sql } from "../sql/port";
import type { Enrichment } from "../processing/enrichment";
import type { Logger } from "../observability/logger";
import { requestedStages } from "../processing/stage-state";
import { leaveToSweep } from "../processing/lease";
import { insertPost } from "./insert-post";
import { findReplyTargets } from "./post-store";
import { replyVerdict } from "./reply-gating";

export interface CreatePostInput {
  sql: Sql;
  appId: string;
  did: string;
  actor: string;
  actorDid: string | undefined;
  body: CreatePostBody;
  now: Date;
  /** Completed inside the post's insert when the request holds an Idempotency-Key. */
  idempotency?: IdempotencyClaim;
  enrichment: Enrichment;
  log: Logger;
  /** The request's id: an inline pass runs under it. */
  requestId?: string;
}

/** Writes a prompt or a reply after checking its references against stored state and the reply gate. */
export const createPost = async (input: CreatePostInput): Promise<{ postId: string }> => {
  const { sql, appId, did, actor, body } = input;
  // The key and createdAt are one clock reading, so lists ordered by key are ordered by createdAt too: a key
  // minted after the request's other awaits would let a reply created earlier sort after one created later.
  const keyedAt = (ms: number) => {
    const rkey = nextTid(ms);
    return { rkey, record: buildPostRecord(body, tidTime(rkey)) };
  };
  let { rkey, record } = keyedAt(input.now.getTime());
  refuseOversizeRow(record, actor, input.actorDid);
  if (body.processing && !body.embed) {
    throw validationError("processing needs an audio embed", [{ path: ["body", "processing"], message: "a post without audio has nothing to process" }]);
  }
  const parentRef = body.reply ? tenantPostRef(body.reply.parent.uri, did, "parent") : undefined;
  const rootRef = body.reply ? tenantPostRef(body.reply.root.uri, did, "root") : undefined;
  const audio = body.embed?.audio;
  if (body.reply || audio) {
    const targets = await findReplyTargets(sql, appId, {
      parentRkey: parentRef,
      rootRkey: rootRef,
      blob: audio ? { cid: audio.ref.$link, mimeType: audio.mimeType } : undefined,
    });
    if (body.reply) {
      const { parent, root } = targets;
      if (!parent || parent.cid !== body.reply.parent.cid) throw badRef("parent", "reply.parent does not name a current post of this tenant");
      const expectedRoot = parent.kind === "prompt" ? parent.rkey : parsePostUri(parent.rootUri ?? "")?.rkey;
      if (!root || root.rkey !== expectedRoot || root.cid !== body.reply.root.cid) {
        throw badRef("root", "reply.root must be the parent's thread root, with its current cid");
      }
      const verdict = replyVerdict(parent, actor);
      if (!verdict.canReply) throw new DomainError("NOT_A_PARTICIPANT", "only the two participants of a branch may reply within it");
    }
    if (audio && targets.blob?.size !== audio.size) {
      throw validationError("embed.audio does not name a blob this tenant uploaded, with this mimeType and size", [
        { path: ["body", "embed", "audio"], message: "unknown blob" },
      ]);
    }
  }
  const decisions = input.enrichment.plan(appId, requestedStages(body.processing), input.log);
  // TIDs carry a random clock id, so a collision is rare; a taken key just draws another, three times at most. A reply
  // passed by a later-keyed one that committed first is keyed again after it, as often as that happens: each pass is
  // another reply stored, so a burst of replies to one post passes a writer at most once per reply racing it.
  for (let collisions = 0; collisions < 3; ) {
    const cid = recordCid(record);
    const answer = { postId: rkey };
    const inserted = await insertPost(
      sql,
      { appId, rkey, record, cid, authorId: actor, authorDid: input.actorDid ?? null },
      input.idempotency ? { claim: input.idempotency, answer } : undefined,
      { decisions, now: input.now, webhooks: input.enrichment.webhooks(appId) },
    );
    if (inserted) {
      try {
        await input.enrichment.afterRequest({ appId, postId: rkey }, inserted, input.log, input.requestId);
      } catch (error) {
        // The post and its answer are stored: the next sweep dispatches its pending stages again.
        input.log.error("processing job not dispatched; the sweep retries it", { appId, postId: rkey, error: String(error) });
        await leaveToSweep(sql, appId, rkey, input.now).catch(() => undefined);
      }
      return answer;
    }
    // Not inserted: the key was taken, or (a reply) a later-keyed reply to its parent committed first, and a client
    // paging the replies forward would never see this one behind it (migration 0018). The next key comes after both.
    const latest = body.reply ? await latestReplyKey(sql, appId, body.reply.parent.uri) : undefined;
    if (!latest || latest <= rkey) collisions++;
    ({ rkey, record } = keyedAt(Math.max(Date.now(), latest ? tidTime(latest).getTime() + 1 : 0)));
  }
  throw new Error("could not allocate a record key");
};

/**
 * The most a post's own columns may hold as stored: its record's JSON text (each control character a 6-byte escape),
 * its author's id and DID. A post travels whole in one row of every read that finds it, and the Data API refuses a
 * row over 64 KB: this leaves room for what the row also carries (the thread's author ids, stage states, the rate
 * limits of the read), and takes every post the schema allows whose characters JSON stores as sent (about 47 KB at
 * most, with 256-character ids and a 2 KB DID).
 */
const maxStoredPostBytes = 48 * 1024;

/** Refuses, naming the larger of text and selfLabels, a post whose stored row would pass `maxStoredPostBytes`. */
const refuseOversizeRow = (record: PostRecord, actor: string, actorDid: string | undefined) => {
  const stored = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? ""));
  const bytes = stored(record) + Buffer.byteLength(actor) + Buffer.byteLength(actorDid ?? "");
  if (bytes <= maxStoredPostBytes) return;
  const field = stored(record.text) >= stored(record.selfLabels) ? "text" : "selfLabels";
  const message = `the post is ${bytes} bytes as stored (control characters take 6 bytes each), over ${maxStoredPostBytes}`;
  throw validationError(message, [{ path: ["body", field], message }]);
};

/** The latest key among the replies to `parentUri`. */
const latestReplyKey = async (sql: Sql, appId: string, parentUri: string): Promise<string | undefined> => {
  const [row] = await sql.query<{ rkey: string | null }>(
    "SELECT max(rkey) AS rkey FROM posts WHERE app_id = $1 AND kind = 'reply' AND parent_uri = $2",
    [appId, parentUri],
  );
  return row?.rkey ?? undefined;
};

const tenantPostRef = (uri: string, did: string, field: "parent" | "root"): string => {
  const parsed = parsePostUri(uri);
  if (!parsed || parsed.did !== did) throw badRef(field, `reply.${field}.uri must be a post of this tenant`);
  return parsed.rkey;
};

const badRef = (field: "parent" | "root", message: string) =>
  validationError(message, [{ path: ["body", "reply", field], message }]);
