/** The `blobs` table: which tenant uploaded which bytes, declared as which type, how long they play. */
import { firstRead } from "../sql/first-read";
import type { Sql } from "../sql/port";

export interface BlobRecord {
  appId: string;
  cid: string;
  mimeType: string;
  size: number;
  durationMs: number | null;
}

/** Idempotent: the same bytes uploaded again under the same type keep their first row. */
export async function recordBlob(sql: Sql, blob: BlobRecord): Promise<void> {
  await sql.query(
    `INSERT INTO blobs (app_id, cid, mime_type, size, duration_ms) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (app_id, cid, mime_type) DO NOTHING`,
    [blob.appId, blob.cid, blob.mimeType, blob.size, blob.durationMs],
  );
}

interface BlobRow {
  app_id: string;
  cid: string;
  mime_type: string;
  size: number;
  duration_ms: number | null;
}

const toRecord = (row: BlobRow): BlobRecord => ({
  appId: row.app_id,
  cid: row.cid,
  mimeType: row.mime_type,
  size: Number(row.size),
  durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
});

/**
 * The tenant's blob with that CID; when it was declared under several types, the first declaration wins. The
 * request's first read: playback's rate limits ride in its statement. One row, so no outer order.
 */
export async function findBlob(sql: Sql, appId: string, cid: string): Promise<BlobRecord | null> {
  const rows = await firstRead<BlobRow>(sql, {
    text: `SELECT app_id, cid, mime_type, size::integer AS size, duration_ms FROM blobs
            WHERE app_id = $1 AND cid = $2 ORDER BY created_at, mime_type LIMIT 1`,
    params: [appId, cid],
  });
  return rows[0] ? toRecord(rows[0]) : null;
}
