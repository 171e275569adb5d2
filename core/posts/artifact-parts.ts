/**
 * A post's artifacts (transcript record, waveform) leave the database as their JSON's UTF-8 bytes cut into parts
 * (json-parts.ts), one row each, never inside the post's row: the RDS Data API refuses any row over 64 KB, and a
 * waveform passes that at about seven minutes of audio (20 points per second).
 *
 * A post whose artifacts together stay within `inlineArtifactBytes` gets its parts in the read that found it (one
 * statement). Larger ones (about half an hour of waveform and more) are read after it, `partsPerRead` parts per
 * statement, each statement under the Data API's 1 MiB response cap.
 */
import { decodeParts, partBytes, readJsonInParts } from "../sql/json-parts";
import type { Sql } from "../sql/port";

/** A post's artifacts up to this many bytes in all travel with the read that finds the post. */
export const inlineArtifactBytes = 256 * 1024;

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
      else values[name] = decodeParts(this.parts[name], bytes);
    }
    return { values, missing };
  }
}

/** An artifact too large to travel with its post, read in parts after it (json-parts.ts). Null when it is gone. */
export const readLargeArtifact = (sql: Sql, appId: string, rkey: string, name: ArtifactName): Promise<unknown> =>
  readJsonInParts(sql, `SELECT convert_to(${stored[name].body}::text, 'UTF8') AS body FROM ${stored[name].from} WHERE app_id = $1 AND rkey = $2`, [appId, rkey], `the ${name} of ${appId}/${rkey}`);
