import type { AcceptedMimeType } from "../records/accepted-types";
import type { StageState } from "../processing/stage-state";
import { stageOrder, type Stage, type Waveform } from "../providers/provider-port";
import type { Loudness } from "../records/loudness";
import type { PostRecord } from "../records/post-schema";
import type { TranscriptRecord } from "../records/transcript-record";
import type { Sql } from "../sql/port";
import { ArtifactParts, artifactBodies, partRows, readLargeArtifact, type ArtifactName } from "./artifact-parts";

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

/**
 * The columns every post read selects (`p` is posts, `b` the embedded blob's row, `e` the enrichment row, `t` the
 * transcript, `art` the artifacts' bytes), and their mapping. Stage states are aggregated per row, so a page is
 * still one statement. The artifacts' bytes do not leave the statement as they are: `postRows` cuts them into parts.
 */
export const postColumns = `p.rkey, p.record, p.cid, p.author_id, p.author_did, p.kind, p.root_author_id, p.branch_author_id,
  b.duration_ms, e.audio_cid, e.audio_mime_type, e.audio_size::integer AS audio_size, e.audio_duration_ms, e.loudness,
  art.transcript AS transcript_body, art.waveform AS waveform_body,
  (SELECT json_object_agg(s.stage, json_build_object('status', s.status, 'updatedAt', s.updated_at, 'reason', s.reason))
     FROM post_stages s WHERE s.app_id = p.app_id AND s.rkey = p.rkey) AS processing`;

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

/**
 * The posts of a read's rows (`postRows`, in post order, each post's parts after it), with any artifact too large
 * to travel inline read after, in statements of its own. Posts past `max` are dropped before any such read.
 */
export const readPostRows = async (sql: Sql, appId: string, rows: Record<string, unknown>[], max = Infinity): Promise<PostRow[]> => {
  const posts: { row: Record<string, unknown>; parts: ArtifactParts }[] = [];
  for (const r of rows) {
    if (Number(r.part_no) === 0) {
      const bytes = { transcript: Number(r.transcript_bytes ?? 0), waveform: Number(r.waveform_bytes ?? 0) };
      posts.push({ row: r, parts: new ArtifactParts(bytes) });
    } else {
      posts.at(-1)!.parts.add(r.part_of as ArtifactName, r.part as Uint8Array);
    }
  }
  const read: PostRow[] = [];
  for (const { row, parts } of posts.slice(0, max)) {
    const { values, missing } = parts.settle();
    for (const { name } of missing) values[name] = await readLargeArtifact(sql, appId, row.rkey as string, name);
    read.push(toPostRow(row, values));
  }
  return read;
};
