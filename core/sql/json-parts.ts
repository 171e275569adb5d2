/**
 * JSON too large for one row read in parts. The RDS Data API refuses any row over 64 KB and any response over
 * 1 MiB, so a large JSON value leaves the database as its UTF-8 bytes cut into parts of `partBytes`, one row each,
 * `partsPerRead` parts per statement. Parts are bytes, not characters: every part has the same known size whatever
 * the text is, and the halves of a character cut at a part boundary join again before decoding.
 */
import type { Sql, SqlValue } from "./port";

/** Bytes per part: with a row's other columns, far under 64 KB a row. */
export const partBytes = 32 * 1024;
/** Parts per statement: 512 KiB, half the Data API's 1 MiB cap, leaving room for its base64. */
export const partsPerRead = 16;

/** Joins a value's parts, checked against its size, and parses them. */
export const decodeParts = (parts: Uint8Array[], bytes: number): unknown => {
  const whole = Buffer.concat(parts);
  if (whole.length !== bytes) throw new Error(`JSON parts add up to ${whole.length} bytes, not ${bytes}`);
  return JSON.parse(whole.toString("utf8"));
};

/**
 * The JSON value that `source` selects (one row whose column `body` is the value's UTF-8 bytes, e.g.
 * `SELECT convert_to(t.record::text, 'UTF8') AS body FROM transcripts t WHERE app_id = $1 AND rkey = $2`, over
 * `params`), read in statements of `partsPerRead` parts. Each statement also answers the value's digest: should it be
 * replaced between two statements, the read starts over on the new one, so parts of two versions are never joined.
 * Null when it is gone.
 */
export const readJsonInParts = async (sql: Sql, source: string, params: SqlValue[], what: string): Promise<unknown> => {
  const from = `$${params.length + 1}::int`;
  const to = `$${params.length + 2}::int`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const parts: Uint8Array[] = [];
    let digest: string | undefined;
    let total = 0;
    let changed = false;
    for (let first = 1; !changed && (digest === undefined || (first - 1) * partBytes < total); first += partsPerRead) {
      const rows = await sql.query<{ part: Uint8Array; bytes: number; digest: string }>(
        `SELECT substring(a.body FROM (n - 1) * ${partBytes} + 1 FOR ${partBytes}) AS part, octet_length(a.body) AS bytes, md5(a.body) AS digest
           FROM (${source} OFFSET 0) a, generate_series(${from}, ${to}) AS n
          WHERE n <= (octet_length(a.body) + ${partBytes - 1}) / ${partBytes}
          ORDER BY n`,
        [...params, first, first + partsPerRead - 1],
      );
      if (rows.length === 0 && digest === undefined) return null;
      for (const row of rows) {
        if (digest !== undefined && row.digest !== digest) changed = true;
        digest ??= row.digest;
        total = Number(row.bytes);
        parts.push(row.part);
      }
      if (rows.length === 0) changed = true;
    }
    if (!changed) return decodeParts(parts, total);
  }
  throw new Error(`${what} kept changing while it was read`);
};
