import type { BlobRecord } from "../../core/audio/blob-records";
import type { Sql } from "../../core/sql/port";

/**
 * A tenant's rows of the `blobs` table, oldest first, read straight from the table: what an operator would query.
 * The service itself only ever looks one blob up (`findBlob`).
 */
export async function blobRows(sql: Sql, appId: string): Promise<BlobRecord[]> {
  const rows = await sql.query<{ app_id: string; cid: string; mime_type: string; size: number; duration_ms: number | null }>(
    `SELECT app_id, cid, mime_type, size::integer AS size, duration_ms FROM blobs WHERE app_id = $1 ORDER BY created_at, cid, mime_type`,
    [appId],
  );
  return rows.map((row) => ({
    appId: row.app_id,
    cid: row.cid,
    mimeType: row.mime_type,
    size: Number(row.size),
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
  }));
}
