import type { AcceptedMimeType } from "../records/accepted-types";
import type { StageState } from "../processing/stage-state";
import { stageOrder, type Stage, type Waveform } from "../providers/provider-port";
import type { Loudness } from "../records/loudness";
import type { PostRecord } from "../records/post-schema";
import type { TranscriptRecord } from "../records/transcript-record";
import type { Sql } from "../sql/port";
import { orderedText, type OrderedRead } from "../sql/first-read";
import { ArtifactParts, artifactBodies, partOrder, partRows, readLargeArtifact, type ArtifactName } from "./artifact-parts";

/** A post as the store reads it: the record, its CID, and the facets derived from it. */
export interface PostRow {
  rkey: string;
  record: PostRecord;
  cid: string;
  authorId: string;
  authorDid: string | null;
  kind: "prompt" | "reply";
  rootAuthorId: string | null;
  branchAuthorId: string | null;
  /** Measured duration of the embedded audio, from the blob row. */
  durationMs: number | null;
  /** Enrichment kept beside the record: stage states, the current processed variant, transcript and waveform. */
  processing: Partial<Record<Stage, StageState>> | null;
  variant: { cid: string; mimeType: AcceptedMimeType; size: number; durationMs: number | null } | null;
  transcript: TranscriptRecord | null;
  waveform: Waveform | null;
  /** Normalize's figures of the current bytes; shown once normalize is ready. */
  loudness: Loudness | null;
}

/** The stage states of post `p`. Every settle moves a stage's time on, and every artifact is written by a settle. */
const stageStates = `(SELECT json_object_agg(s.stage, json_build_object('status', s.status, 'updatedAt', s.updated_at, 'reason', s.reason))
     FROM post_stages s WHERE s.app_id = p.app_id AND s.rkey = p.rkey)`;

/**
 * The columns every post read selects (`p` is posts, `b` the embedded blob's row, `e` the enrichment row, `t` the
 * transcript, `art` the artifacts' bytes), and their mapping. Stage states are aggregated per row, so a page is
 * still one statement. The artifacts' bytes do not leave the statement as they are: `postRows` cuts them into parts.
 */
export const postColumns = `p.rkey, p.record, p.cid, p.author_id, p.author_did, p.kind, p.root_author_id, p.branch_author_id,
  b.duration_ms, e.audio_cid, e.audio_mime_type, e.audio_size::integer AS audio_size, e.audio_duration_ms, e.loudness,
  art.transcript AS transcript_body, art.waveform AS waveform_body, ${stageStates} AS processing`;

export const blobJoin = `LEFT JOIN blobs b ON b.app_id = p.app_id AND b.cid = p.embed_cid
  AND b.mime_type = p.record #>> '{embed,audio,mimeType}'
  LEFT JOIN post_enrichment e ON e.app_id = p.app_id AND e.rkey = p.rkey
  LEFT JOIN transcripts t ON t.app_id = p.app_id AND t.rkey = p.rkey
  ${artifactBodies}`;

/** Columns on a post's own row only (see `postRows`). */
const ownRowColumns = ["cid", "author_id", "author_did", "kind", "root_author_id", "branch_author_id", "duration_ms", "audio_cid",
  "audio_mime_type", "audio_size", "audio_duration_ms", "processing", "record", "loudness"];

/**
 * The text columns of a post's row whose size is the tenant's doing (the record, the author's ids and DID) or grows
 * with processing (stage states, loudness); the rest are short and bounded (TIDs, CIDs, MIME types, numbers).
 * A page's byte budget counts them (post-store.ts).
 */
export const postTextColumns = ["record", "author_id", "author_did", "root_author_id", "branch_author_id", "processing", "loudness"];

/**
 * What a read answers for the posts `x` (selected with `postColumns`): a row per post, then a row per part of its
 * artifacts (see artifact-parts.ts). The post's columns are on its own row only, and its part rows carry just the
 * rkey that orders them: the Data API counts every row's values against its 64 KB a row and 1 MiB an answer, and an
 * author's DID alone may be 2 KB. `x` must be a materialized row source (a CTE or a subquery with OFFSET 0), so the
 * bodies are encoded once per post.
 */
export const postRows = (x: string) => `SELECT ${x}.rkey,
    ${ownRowColumns.map((c) => `CASE WHEN part.part_no = 0 THEN ${x}.${c} END AS ${c}`).join(", ")},
    octet_length(${x}.transcript_body) AS transcript_bytes, octet_length(${x}.waveform_body) AS waveform_bytes,
    part.part_of, part.part_no, part.part
  FROM ${x} ${partRows(x)}`;

const toStageStates = (value: unknown): PostRow["processing"] => {
  if (!value || typeof value !== "object") return null;
  const states: Partial<Record<Stage, StageState>> = {};
  const byStage = value as Record<string, { status: StageState["status"]; updatedAt: string; reason: StageState["reason"] | null }>;
  for (const stage of stageOrder) {
    const raw = byStage[stage];
    if (!raw) continue;
    states[stage] = {
      status: raw.status,
      updatedAt: new Date(raw.updatedAt.replace(" ", "T")).toISOString(),
      ...(raw.reason ? { reason: raw.reason } : {}),
    };
  }
  return states;
};

const toPostRow = (r: Record<string, unknown>, artifacts: Partial<Record<ArtifactName, unknown>>): PostRow => ({
  rkey: r.rkey as string,
  record: r.record as PostRecord,
  cid: r.cid as string,
  authorId: r.author_id as string,
  authorDid: (r.author_did as string | null) ?? null,
  kind: r.kind as PostRow["kind"],
  rootAuthorId: (r.root_author_id as string | null) ?? null,
  branchAuthorId: (r.branch_author_id as string | null) ?? null,
  durationMs: (r.duration_ms as number | null) ?? null,
  processing: toStageStates(r.processing),
  variant: r.audio_cid
    ? {
        cid: r.audio_cid as string,
        mimeType: r.audio_mime_type as AcceptedMimeType,
        size: Number(r.audio_size),
        durationMs: (r.audio_duration_ms as number | null) ?? null,
      }
    : null,
  transcript: (artifacts.transcript as TranscriptRecord | undefined) ?? null,
  waveform: (artifacts.waveform as Waveform | undefined) ?? null,
  loudness: (r.loudness as Loudness | null) ?? null,
});

/** One post's read ($1 the tenant, $2 the post's rkey): its own row first, then its parts. */
export const findPostRead = (appId: string, rkey: string): OrderedRead => ({
  text: `WITH post AS MATERIALIZED (SELECT ${postColumns} FROM posts p ${blobJoin} WHERE p.app_id = $1 AND p.rkey = $2)
         ${postRows("post")}`,
  params: [appId, rkey],
  orderBy: partOrder,
});

type ReadPost = { row: Record<string, unknown>; parts: ArtifactParts };

/** A read's rows (`postRows`, in post order, each post's parts after it), a post each. */
const byPost = (rows: Record<string, unknown>[]): ReadPost[] => {
  const posts: ReadPost[] = [];
  for (const r of rows) {
    if (Number(r.part_no) === 0) {
      const bytes = { transcript: Number(r.transcript_bytes ?? 0), waveform: Number(r.waveform_bytes ?? 0) };
      posts.push({ row: r, parts: new ArtifactParts(bytes) });
    } else {
      posts.at(-1)!.parts.add(r.part_of as ArtifactName, r.part as Uint8Array);
    }
  }
  return posts;
};

/**
 * The posts of a read's rows (`postRows`, in post order, each post's parts after it), with any artifact too large
 * to travel inline read after, in statements of its own. Posts past `max` are dropped before any such read.
 */
export const readPostRows = async (sql: Sql, appId: string, rows: Record<string, unknown>[], max = Infinity): Promise<PostRow[]> => {
  const read: PostRow[] = [];
  for (const post of byPost(rows).slice(0, max)) {
    const withArtifacts = await withLargeArtifacts(sql, appId, post);
    if (withArtifacts) read.push(withArtifacts);
  }
  return read;
};

const sameStates = (a: unknown, b: unknown) => JSON.stringify(toStageStates(a)) === JSON.stringify(toStageStates(b));

/**
 * A post with its artifacts, reading those too large to travel with it. Read in statements after the post's, they
 * may come from a settle committed in between (a rerun's new bytes, their transcript and waveform), which must never
 * be shown with the post's older bytes and stage states: the stage states are read once more after them, and when
 * they moved (a settle wrote since), the post is read again whole.
 */
const withLargeArtifacts = async (sql: Sql, appId: string, first: ReadPost): Promise<PostRow | null> => {
  const rkey = first.row.rkey as string;
  for (let post: ReadPost | undefined = first, tries = 0; tries < 3; tries++) {
    if (!post) return null; // gone when read again
    const { values, missing } = post.parts.settle();
    if (missing.length === 0) return toPostRow(post.row, values);
    for (const { name } of missing) values[name] = await readLargeArtifact(sql, appId, rkey, name);
    const [now] = await sql.query(`SELECT ${stageStates} AS processing FROM posts p WHERE p.app_id = $1 AND p.rkey = $2`, [appId, rkey]);
    if (sameStates(now?.processing, post.row.processing)) return toPostRow(post.row, values);
    const again = findPostRead(appId, rkey);
    [post] = byPost(await sql.query(orderedText(again), again.params));
  }
  throw new Error(`the post ${appId}/${rkey} kept changing while its artifacts were read`);
};
