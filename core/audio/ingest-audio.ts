/** Stores an uploaded audio stream at its content address and records it for the tenant. */
import type { Readable } from "node:stream";
import { blobKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import type { Sql } from "../sql/port";
import { maxUploadBytes } from "./accepted-types";
import { type BlobRef, blobRef } from "./blob-ref";
import { recordBlob } from "./blob-records";
import { assertAcceptedMimeType, scanAudio } from "./scan-audio";

export interface IngestAudioOptions {
  store: BlobStore;
  sql: Sql;
  appId: string;
  /** The declared type, compared exactly with the accepted list. */
  mimeType: string;
  source: Readable;
  maxBytes?: number;
}

export interface IngestedAudio {
  blob: BlobRef;
  /** `blobs/<appId>/<cid>` */
  key: string;
  durationMs: number | null;
}

/**
 * One pass: the bytes stream into a staging write while they are counted, hashed, sniffed and measured; only
 * when all of that passes are they moved to `blobs/<appId>/<cid>` and recorded. Any failure discards the staged
 * bytes, so a refused upload leaves neither object nor row. Identical bytes land on the same key, stored once.
 */
export async function ingestAudio({ store, sql, appId, mimeType, source, maxBytes = maxUploadBytes }: IngestAudioOptions): Promise<IngestedAudio> {
  let staged;
  try {
    assertAcceptedMimeType(mimeType);
    staged = await store.stage({ contentType: mimeType });
  } catch (error) {
    // Stop reading the upload: nothing will consume it.
    source.destroy();
    throw error;
  }
  let key: string;
  let scan;
  try {
    scan = await scanAudio({ source, mimeType, sink: staged.stream, maxBytes });
    key = blobKey(appId, scan.cid);
    await staged.commit(key);
  } catch (error) {
    await staged.discard().catch(() => undefined);
    throw error;
  }
  // Recorded after the bytes are in place: a row never points at a missing object.
  await recordBlob(sql, { appId, cid: scan.cid, mimeType, size: scan.size, durationMs: scan.durationMs });
  return { blob: blobRef(scan.cid, mimeType, scan.size), key, durationMs: scan.durationMs };
}
