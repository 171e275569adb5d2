/** The worker pass's reads and fenced writes (each write lands only while the pass holds the post's lease). */
import type { AcceptedMimeType } from "../records/accepted-types";
import { recordBlob } from "../audio/blob-records";
import { blobKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import { type AudioRef, ProviderError, type Stage, type Transcript, type Waveform } from "../providers/provider-port";
import { placeholders } from "../sql/placeholders";
import type { Sql } from "../sql/port";
import { claimMs, eventsFrom, outboxInsert } from "../webhooks/outbox";
import type { ClaimedEvent } from "../webhooks/webhook-event";
import type { Loudness } from "../records/loudness";
import { recomputedAfter, type StageReason } from "./stage-state";

export interface PendingStage {
  stage: Stage;
  generation: number;
}

export interface PassState {
  postCid: string;
  /** The current bytes: the latest processed variant, else the upload. Null for a post without audio. */
  audio: AudioRef | null;
  pending: PendingStage[];
}

export const loadPassState = async (sql: Sql, appId: string, rkey: string): Promise<PassState | null> => {
  const [row] = await sql.query(
    `SELECT p.cid, p.record #> '{embed,audio}' AS audio, b.duration_ms,
            e.audio_cid, e.audio_mime_type, e.audio_size::integer AS audio_size, e.audio_duration_ms,
            (SELECT json_agg(json_build_object('stage', s.stage, 'generation', s.generation))
               FROM post_stages s WHERE s.app_id = p.app_id AND s.rkey = p.rkey AND s.status = 'pending') AS pending
       FROM posts p
       LEFT JOIN blobs b ON b.app_id = p.app_id AND b.cid = p.embed_cid AND b.mime_type = p.record #>> '{embed,audio,mimeType}'
       LEFT JOIN post_enrichment e ON e.app_id = p.app_id AND e.rkey = p.rkey
      WHERE p.app_id = $1 AND p.rkey = $2`,
    [appId, rkey],
  );
  if (!row) return null;
  const upload = row.audio as { ref: { $link: string }; mimeType: AcceptedMimeType; size: number } | null;
  const audio: AudioRef | null = row.audio_cid
    ? {
        appId,
        cid: row.audio_cid as string,
        mimeType: row.audio_mime_type as AcceptedMimeType,
        size: Number(row.audio_size),
        durationMs: (row.audio_duration_ms as number | null) ?? null,
      }
    : upload
      ? { appId, cid: upload.ref.$link, mimeType: upload.mimeType, size: upload.size, durationMs: (row.duration_ms as number | null) ?? null }
      : null;
  return { postCid: row.cid as string, audio, pending: (row.pending as PendingStage[] | null) ?? [] };
};

export interface Settle {
  appId: string;
  rkey: string;
  token: string;
  stage: Stage;
  generation: number;
  status: "ready" | "failed";
  reason?: StageReason;
  now: Date;
  webhooks: boolean;
}

/**
 * Settles a pending stage of this generation and writes its event, in one statement, only under the lease. The lease
 * row is locked (FOR SHARE) before the stage's: read from the statement's snapshot, a settle that then waited on the
 * stage's row would land after a takeover and the new holder's byte change (a transcript of the old bytes); locked,
 * a takeover waits for the settle to commit, and a settle after one sees the new token and settles nothing. Every
 * settle takes the lease row before the stage rows, as the byte-changing writes before it do (one lock order).
 * The stage's time moves forward even from a clock behind the one that queued it, and is its event's occurredAt.
 */
export const settleStage = async (sql: Sql, s: Settle): Promise<{ settled: boolean; events: ClaimedEvent[] }> => {
  const p = placeholders();
  const app = p.add(s.appId);
  const rkey = p.add(s.rkey);
  const now = p.add(s.now.toISOString());
  const [row] = await sql.query(
    `WITH settled AS (
       UPDATE post_stages SET status = ${p.add(s.status)}, reason = ${p.add(s.reason ?? null)},
              updated_at = GREATEST(${now}::timestamptz, updated_at + interval '1 millisecond')
        WHERE app_id = ${app} AND rkey = ${rkey} AND stage = ${p.add(s.stage)} AND status = 'pending'
          AND generation = ${p.add(s.generation)}::integer
          AND EXISTS (SELECT 1 FROM post_enrichment WHERE app_id = ${app} AND rkey = ${rkey} AND lease_token = ${p.add(s.token)} FOR SHARE)
       RETURNING stage, status, updated_at
     ), events AS (
       ${outboxInsert("settled", { appId: app, rkey, occurredAt: "s.updated_at", claimedUntil: p.add(new Date(s.now.getTime() + claimMs).toISOString()), enabled: p.add(s.webhooks) })}
     )
     SELECT EXISTS (SELECT 1 FROM settled) AS settled, (SELECT json_agg(e) FROM events e) AS events`,
    p.values,
  );
  return { settled: row?.settled === true, events: eventsFrom(row?.events) };
};

/**
 * A byte-changing stage's output becomes the current bytes: registered as a blob of the tenant (so it plays), set
 * as the post's variant with the loudness figures that describe it (normalize's; none from another stage), and the
 * ready stages that describe the bytes go back to pending for a recompute. The transcript and waveform of the old
 * bytes go: they no longer describe what is served, and the post shows none until they are computed again (or for
 * good, if that recompute fails).
 */
export const storeVariant = async (
  sql: Sql,
  blobs: Pick<BlobStore, "stat">,
  variant: { appId: string; rkey: string; token: string; stage: Stage; audio: AudioRef; loudness?: Loudness; now: Date },
): Promise<void> => {
  const { appId, rkey, token, audio, now } = variant;
  // Under the blob's lock, as an upload records its row: the store janitor removes an unreferenced object only
  // under it. The output may have landed on an old orphan copy of the same bytes, which the janitor could take
  // just before this row went in; then nothing may point at it, and the stage runs again to write it anew.
  await recordBlob(sql, { appId, cid: audio.cid, mimeType: audio.mimeType, size: audio.size, durationMs: audio.durationMs });
  if (!(await blobs.stat(blobKey(appId, audio.cid)))) {
    throw new ProviderError("retry", `${variant.stage}: its output was removed from the store before it was recorded`);
  }
  await sql.query(
    `UPDATE post_enrichment SET audio_cid = $4, audio_mime_type = $5, audio_size = $6, audio_duration_ms = $7, loudness = $8::json,
            waveform = NULL
      WHERE app_id = $1 AND rkey = $2 AND lease_token = $3`,
    [appId, rkey, token, audio.cid, audio.mimeType, audio.size, audio.durationMs, variant.loudness ? JSON.stringify(variant.loudness) : null],
  );
  await sql.query(`DELETE FROM transcripts WHERE app_id = $1 AND rkey = $2`, [appId, rkey]);
  // Forward from the stage's own time, whatever this clock says: a transition never moves a stage's time back.
  await sql.query(
    `UPDATE post_stages SET status = 'pending', reason = NULL, updated_at = GREATEST($3::timestamptz, updated_at + interval '1 millisecond'),
            generation = generation + 1, redispatched = false, lapse_from = NULL
      WHERE app_id = $1 AND rkey = $2 AND status = 'ready' AND stage = ANY (string_to_array($4, ','))`,
    [appId, rkey, now.toISOString(), recomputedAfter(variant.stage).join(",")],
  );
};

/** The post's one transcript record, replaced on recompute. */
export const storeTranscript = async (sql: Sql, appId: string, rkey: string, record: object, cid: string, now: Date): Promise<void> => {
  await sql.query(
    `INSERT INTO transcripts (app_id, rkey, record, cid, updated_at) VALUES ($1, $2, $3::json, $4, $5::timestamptz)
     ON CONFLICT (app_id, rkey) DO UPDATE SET record = excluded.record, cid = excluded.cid, updated_at = excluded.updated_at`,
    [appId, rkey, JSON.stringify(record), cid, now.toISOString()],
  );
};

/** A JSON column of the post's enrichment row, written only under the lease. */
const storeEnrichmentJson =
  <T>(column: "waveform" | "loudness") =>
  async (sql: Sql, appId: string, rkey: string, token: string, value: T): Promise<void> => {
    await sql.query(`UPDATE post_enrichment SET ${column} = $4::json WHERE app_id = $1 AND rkey = $2 AND lease_token = $3`, [
      appId,
      rkey,
      token,
      JSON.stringify(value),
    ]);
  };

export const storeWaveform = storeEnrichmentJson<Waveform>("waveform");

/** Normalize's figures of bytes it left as they were (already on target, or silence). */
export const storeLoudness = storeEnrichmentJson<Loudness>("loudness");

export type { Transcript };

/** Whether the post has a pending stage: read after a pass let go of its lease, for a stage requested meanwhile. */
export const hasPendingStage = async (sql: Sql, appId: string, rkey: string): Promise<boolean> => {
  const [row] = await sql.query(`SELECT EXISTS (SELECT 1 FROM post_stages WHERE app_id = $1 AND rkey = $2 AND status = 'pending') AS pending`, [appId, rkey]);
  return row?.pending === true;
};
