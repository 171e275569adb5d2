/** The `uploads` table: presigned direct-to-S3 uploads waiting for their completion call. */
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

export async function insertUpload(sql: Sql, upload: UploadRecord): Promise<void> {
  await sql.query(
    `INSERT INTO uploads (upload_id, app_id, actor, mime_type, size, staging_key, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [upload.uploadId, upload.appId, upload.actor, upload.mimeType, upload.size, upload.stagingKey, upload.expiresAt],
  );
}

interface UploadRow {
  upload_id: string;
  app_id: string;
  actor: string;
  mime_type: string;
  size: number;
  staging_key: string;
  expires_at: Date | string;
}

/**
 * Takes the upload out of the table for its tenant and actor: of two racing completions exactly one gets it,
 * and another tenant's or actor's id is as unknown as a made-up one.
 */
export async function claimUpload(sql: Sql, uploadId: string, appId: string, actor: string): Promise<UploadRecord | null> {
  const rows = await sql.query<UploadRow>(
    `DELETE FROM uploads WHERE upload_id = $1 AND app_id = $2 AND actor = $3
     RETURNING upload_id, app_id, actor, mime_type, size::integer AS size, staging_key, expires_at`,
    [uploadId, appId, actor],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    uploadId: row.upload_id,
    appId: row.app_id,
    actor: row.actor,
    mimeType: row.mime_type,
    size: Number(row.size),
    stagingKey: row.staging_key,
    expiresAt: new Date(row.expires_at),
  };
}
