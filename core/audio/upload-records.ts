/** The `uploads` table: presigned direct-to-S3 uploads waiting for their completion call, and what it stored. */
import type { Sql } from "../sql/port";

export interface UploadRecord {
  uploadId: string;
  appId: string;
  actor: string;
  mimeType: string;
  size: number;
  stagingKey: string;
  expiresAt: Date;
}

/** What a completion stored: the blob, as its answer names it. */
export interface CompletedUpload {
  cid: string;
  durationMs: number | null;
}

export type UploadClaim =
  | { state: "claimed"; upload: UploadRecord }
  | { state: "completed"; upload: UploadRecord; completed: CompletedUpload }
  /** Another completion holds the claim and is still running. */
  | { state: "busy" };

/**
 * How long a completion holds its upload: longer than one runs (its request's deadline defaults to 20 s, and its
 * Lambda's timeout is 29 s), so two never run at once; one that died holding it is taken over after this.
 */
export const completionClaimSeconds = 60;

export async function insertUpload(sql: Sql, upload: UploadRecord): Promise<void> {
  await sql.query(
    `INSERT INTO uploads (upload_id, app_id, actor, mime_type, size, staging_key, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [upload.uploadId, upload.appId, upload.actor, upload.mimeType, upload.size, upload.stagingKey, upload.expiresAt],
  );
}

interface UploadRow {
  state: "claimed" | "completed" | "busy";
  upload_id: string;
  app_id: string;
  actor: string;
  mime_type: string;
  size: number;
  staging_key: string;
  expires_at: Date | string;
  blob_cid: string | null;
  duration_ms: number | null;
}

const columns = `upload_id, app_id, actor, mime_type, size::integer AS size, staging_key, expires_at, blob_cid`;

/**
 * Claims the upload for its tenant and actor, on the database's clock: of two racing completions exactly one gets
 * it, and another tenant's or actor's id is as unknown as a made-up one (null). An upload already completed is
 * answered with what it stored; one whose claim is held and not yet lapsed is busy.
 */
export async function claimUpload(sql: Sql, uploadId: string, appId: string, actor: string): Promise<UploadClaim | null> {
  const rows = await sql.query<UploadRow>(
    `WITH claimed AS (
       UPDATE uploads SET claimed_until = clock_timestamp() + $4 * interval '1 second'
        WHERE upload_id = $1 AND app_id = $2 AND actor = $3 AND blob_cid IS NULL
          AND (claimed_until IS NULL OR claimed_until < clock_timestamp())
       RETURNING ${columns}
     )
     SELECT 'claimed' AS state, *, NULL::integer AS duration_ms FROM claimed
     UNION ALL
     -- A completed upload's duration is its blob row's, recorded before the upload was marked.
     SELECT CASE WHEN u.blob_cid IS NULL THEN 'busy' ELSE 'completed' END AS state,
            u.upload_id, u.app_id, u.actor, u.mime_type, u.size::integer, u.staging_key, u.expires_at, u.blob_cid, b.duration_ms
       FROM uploads AS u
       LEFT JOIN blobs AS b ON b.app_id = u.app_id AND b.cid = u.blob_cid AND b.mime_type = u.mime_type
      WHERE u.upload_id = $1 AND u.app_id = $2 AND u.actor = $3 AND NOT EXISTS (SELECT 1 FROM claimed)`,
    [uploadId, appId, actor, completionClaimSeconds],
  );
  const row = rows[0];
  if (!row) return null;
  if (row.state === "busy") return { state: "busy" };
  const upload: UploadRecord = {
    uploadId: row.upload_id,
    appId: row.app_id,
    actor: row.actor,
    mimeType: row.mime_type,
    size: Number(row.size),
    stagingKey: row.staging_key,
    expiresAt: new Date(row.expires_at),
  };
  if (row.state === "claimed") return { state: "claimed", upload };
  return { state: "completed", upload, completed: { cid: row.blob_cid!, durationMs: row.duration_ms === null ? null : Number(row.duration_ms) } };
}

/** Gives the claim up, so the completion can be retried at once (its bytes had not arrived, or it failed on the way). */
export async function releaseUpload(sql: Sql, uploadId: string): Promise<void> {
  await sql.query(`UPDATE uploads SET claimed_until = NULL WHERE upload_id = $1 AND blob_cid IS NULL`, [uploadId]);
}

/** Records the blob the completion stored, for the retries of a completion whose answer was lost. */
export async function markUploadCompleted(sql: Sql, uploadId: string, cid: string): Promise<void> {
  await sql.query(`UPDATE uploads SET blob_cid = $2, claimed_until = NULL WHERE upload_id = $1`, [uploadId, cid]);
}

/** The upload is over without a blob: its bytes were refused, or it came too late. */
export async function deleteUpload(sql: Sql, uploadId: string): Promise<void> {
  await sql.query(`DELETE FROM uploads WHERE upload_id = $1`, [uploadId]);
}
