import type { AcceptedMimeType } from "../records/accepted-types";
import type { StageState } from "../processing/stage-state";
import { stageOrder, type Stage, type Waveform } from "../providers/provider-port";
import type { PostRecord } from "../records/post-schema";
import type { TranscriptRecord } from "../records/transcript-record";

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
}

/**
 * The columns every post read selects (`p` is posts, `b` the embedded blob's row, `e` the enrichment row, `t` the
 * transcript), and their mapping. Stage states are aggregated per row, so a page is still one statement.
 */
export const postColumns = `p.rkey, p.record, p.cid, p.author_id, p.author_did, p.kind, p.root_author_id, p.branch_author_id,
  b.duration_ms, e.audio_cid, e.audio_mime_type, e.audio_size::integer AS audio_size, e.audio_duration_ms, e.waveform,
  t.record AS transcript,
  (SELECT json_object_agg(s.stage, json_build_object('status', s.status, 'updatedAt', s.updated_at, 'reason', s.reason))
     FROM post_stages s WHERE s.app_id = p.app_id AND s.rkey = p.rkey) AS processing`;

export const blobJoin = `LEFT JOIN blobs b ON b.app_id = p.app_id AND b.cid = p.embed_cid
  AND b.mime_type = p.record #>> '{embed,audio,mimeType}'
  LEFT JOIN post_enrichment e ON e.app_id = p.app_id AND e.rkey = p.rkey
  LEFT JOIN transcripts t ON t.app_id = p.app_id AND t.rkey = p.rkey`;

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

export const toPostRow = (r: Record<string, unknown>): PostRow => ({
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
  transcript: (r.transcript as TranscriptRecord | null) ?? null,
  waveform: (r.waveform as Waveform | null) ?? null,
});
