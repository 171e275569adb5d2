import type { PostRecord } from "../records/post-schema";

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
}

/** The columns every post read selects (`p` is posts, `b` the embedded blob's row), and their mapping. */
export const postColumns = `p.rkey, p.record, p.cid, p.author_id, p.author_did, p.kind, p.root_author_id, p.branch_author_id,
  b.duration_ms`;

export const blobJoin = `LEFT JOIN blobs b ON b.app_id = p.app_id AND b.cid = p.embed_cid
  AND b.mime_type = p.record #>> '{embed,audio,mimeType}'`;

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
});
