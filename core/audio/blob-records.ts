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

/**
 * The advisory lock of one stored blob, held for the statement (or transaction) that takes it: the row's insert
 * and the store janitor's removal of an unreferenced object take it, so the two never interleave. Its result is
 * void, which the Data API refuses to return: select it in a subquery or CTE, never as a result column.
 */
export const lockBlob = "pg_advisory_xact_lock(hashtextextended('blob:' || $1::text || '/' || $2::text, 0))";

/** The blob's lock on its own, for a transaction that takes it before what it guards (`$1` appId, `$2` cid). */
export const lockBlobStatement = `SELECT 1 AS locked FROM (SELECT ${lockBlob}) AS lock`;

/**
 * Idempotent: the same bytes uploaded again under the same type keep their first row. True when this call inserted
 * the row. Taken under the blob's lock (lockBlob).
 */
export async function recordBlob(sql: Sql, blob: BlobRecord): Promise<boolean> {
  const rows = await sql.query(
    `WITH locked AS (SELECT ${lockBlob})
     INSERT INTO blobs (app_id, cid, mime_type, size, duration_ms) SELECT $1::text, $2::text, $3::text, $4::bigint, $5::integer FROM locked
     ON CONFLICT (app_id, cid, mime_type) DO NOTHING RETURNING 1 AS inserted`,
    [blob.appId, blob.cid, blob.mimeType, blob.size, blob.durationMs],
  );
  return rows.length > 0;
}

/**
 * Which of these CIDs the tenant's rows still refer to: a blob row, or a post's processed audio. While any does, the
 * object at blobs/<appId>/<cid> must stay.
 */
export async function referencedCids(sql: Sql, appId: string, cids: readonly string[]): Promise<Set<string>> {
  const rows = await sql.query<{ cid: string }>(
    `SELECT cid FROM blobs WHERE app_id = $1 AND cid IN (SELECT json_array_elements_text($2::json))
     UNION SELECT audio_cid AS cid FROM post_enrichment WHERE app_id = $1 AND audio_cid IN (SELECT json_array_elements_text($2::json))`,
    [appId, JSON.stringify(cids)],
  );
  return new Set(rows.map((row) => row.cid));
}

/** Takes back a row this upload inserted, once its object turned out to be gone. */
export async function unrecordBlob(sql: Sql, blob: Pick<BlobRecord, "appId" | "cid" | "mimeType">): Promise<void> {
  await sql.query(`DELETE FROM blobs WHERE app_id = $1 AND cid = $2 AND mime_type = $3`, [blob.appId, blob.cid, blob.mimeType]);
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
