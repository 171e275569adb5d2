/**
 * A post's artifacts (transcript record, waveform) leave the database as their JSON's UTF-8 bytes cut into parts,
 * one row each, never inside the post's row: the RDS Data API refuses any row over 64 KB, and a waveform passes
 * that at about seven minutes of audio (20 points per second). Parts are bytes, not characters, so every part has
 * the same known size whatever the text is, and the halves of a character cut at a part boundary join again when
 * the parts are concatenated before decoding.
 *
 * A post whose artifacts together stay within `inlineArtifactBytes` gets its parts in the read that found it (one
 * statement). Larger ones (about half an hour of waveform and more) are read after it, `partsPerRead` parts per
 * statement, each statement under the Data API's 1 MiB response cap.
 */
import type { Sql } from "../sql/port";

/** Bytes per part: with the post's other columns (the record is left out of part rows) far under 64 KB a row. */
export const partBytes = 32 * 1024;
/** A post's artifacts up to this many bytes in all travel with the read that finds the post. */
export const inlineArtifactBytes = 256 * 1024;
/** Parts per follow-up statement: 512 KiB, half the Data API's 1 MiB cap, leaving room for its base64. */
export const partsPerRead = 16;

export type ArtifactName = "transcript" | "waveform";

/** Where each artifact's JSON text is stored, as `SELECT <body> FROM <from> WHERE app_id = $1 AND rkey = $2`. */
const stored: Record<ArtifactName, { body: string; from: string }> = {
  transcript: { body: "t.record", from: "transcripts t" },
  waveform: { body: "e.waveform", from: "post_enrichment e" },
};

/**
 * The artifacts' bytes beside the post's columns (`p`, `e` and `t` joined as in post-row.ts): `art.transcript` and
 * `art.waveform`. OFFSET 0 keeps the subquery whole, so each body is encoded once per post, not once per part.
 */
export const artifactBodies = `CROSS JOIN LATERAL (
    SELECT convert_to(${stored.transcript.body}::text, 'UTF8') AS transcript, convert_to(${stored.waveform.body}::text, 'UTF8') AS waveform
    OFFSET 0
  ) art`;

/** Bytes of a post's artifacts that travel with it: all of them when within the inline budget, else none. */
export const inlinedBytes = (bodies: string) =>
  `(CASE WHEN coalesce(octet_length(${bodies}.transcript_body), 0) + coalesce(octet_length(${bodies}.waveform_body), 0) <= ${inlineArtifactBytes}
         THEN coalesce(octet_length(${bodies}.transcript_body), 0) + coalesce(octet_length(${bodies}.waveform_body), 0) ELSE 0 END)`;

/**
 * The part rows of one post row `x` (which selects `transcript_body` and `waveform_body`): part 0 carries the post,
 * parts 1.. of each inlined artifact follow. Aliased `part`, with `part_of`, `part_no` and `part`.
 */
export const partRows = (x: string) => `CROSS JOIN LATERAL (
    SELECT NULL::text AS part_of, 0 AS part_no, NULL::bytea AS part
    UNION ALL
    SELECT a.name, n, substring(a.body FROM (n - 1) * ${partBytes} + 1 FOR ${partBytes})
      FROM (VALUES ('transcript', ${x}.transcript_body), ('waveform', ${x}.waveform_body)) AS a(name, body),
           generate_series(1, (octet_length(a.body) + ${partBytes - 1}) / ${partBytes}) AS n
     WHERE ${inlinedBytes(x)} > 0
  ) part`;

/** The order, within one post, of the rows `rows` (the `part` rows or a query over them): its own row first, then its parts. */
export const partOrder = (rows: string) => `${rows}.part_of NULLS FIRST, ${rows}.part_no`;

/** Collects one post's parts as rows arrive, and turns them back into the artifacts' values. */
export class ArtifactParts {
  private readonly parts: Record<ArtifactName, Uint8Array[]> = { transcript: [], waveform: [] };

  constructor(private readonly bytes: Record<ArtifactName, number>) {}

  add(name: ArtifactName, part: Uint8Array) {
    this.parts[name].push(part);
  }

  /** The artifacts that came whole, parsed; and those that did not come (too large to inline), with their size. */
  settle(): { values: Partial<Record<ArtifactName, unknown>>; missing: { name: ArtifactName; bytes: number }[] } {
    const values: Partial<Record<ArtifactName, unknown>> = {};
    const missing: { name: ArtifactName; bytes: number }[] = [];
    for (const name of ["transcript", "waveform"] as const) {
      const bytes = this.bytes[name];
      if (!bytes) continue;
      if (this.parts[name].length === 0) missing.push({ name, bytes });
      else values[name] = decode(this.parts[name], bytes);
    }
    return { values, missing };
  }
}

const decode = (parts: Uint8Array[], bytes: number): unknown => {
  const whole = Buffer.concat(parts);
  if (whole.length !== bytes) throw new Error(`artifact parts add up to ${whole.length} bytes, not ${bytes}`);
  return JSON.parse(whole.toString("utf8"));
};

/**
 * An artifact too large to travel with its post, read in statements of `partsPerRead` parts. Each statement also
 * answers the artifact's digest: should it be replaced between two statements (a stage rerun), the read starts
 * over on the new one, so parts of two versions are never joined. Null when it is gone.
 */
export const readLargeArtifact = async (sql: Sql, appId: string, rkey: string, name: ArtifactName): Promise<unknown> => {
  const { body, from } = stored[name];
  for (let attempt = 0; attempt < 3; attempt++) {
    const parts: Uint8Array[] = [];
    let digest: string | undefined;
    let total = 0;
    let changed = false;
    for (let first = 1; !changed && (digest === undefined || (first - 1) * partBytes < total); first += partsPerRead) {
      const rows = await sql.query<{ part: Uint8Array; bytes: number; digest: string }>(
        `SELECT substring(a.body FROM (n - 1) * ${partBytes} + 1 FOR ${partBytes}) AS part, octet_length(a.body) AS bytes, md5(a.body) AS digest
           FROM (SELECT convert_to(${body}::text, 'UTF8') AS body FROM ${from} WHERE app_id = $1 AND rkey = $2 OFFSET 0) a,
                generate_series($3::int, $4::int) AS n
          WHERE n <= (octet_length(a.body) + ${partBytes - 1}) / ${partBytes}
          ORDER BY n`,
        [appId, rkey, first, first + partsPerRead - 1],
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
    if (!changed) return decode(parts, total);
  }
  throw new Error(`the ${name} of ${appId}/${rkey} kept changing while it was read`);
};
