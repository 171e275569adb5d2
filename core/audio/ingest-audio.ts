/** Stores an uploaded audio stream at its content address and records it for the tenant. */
import type { Readable } from "node:stream";
import { blobKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import type { Sql } from "../sql/port";
import { maxUploadBytes } from "../records/accepted-types";
import { type BlobRef, blobRef } from "./blob-ref";
import { type BlobRecord, lockBlobStatement, recordBlob, referencedCids, unrecordBlob } from "./blob-records";
import { DomainError } from "../domain-error";
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
  let committed;
  try {
    scan = await scanAudio({ source, mimeType, sink: staged.stream, maxBytes });
    key = blobKey(appId, scan.cid);
    committed = await staged.commit(key);
  } catch (error) {
    await staged.discard().catch(() => undefined);
    throw error;
  }
  await recordOrTakeBack(store, sql, key, committed.created, { appId, cid: scan.cid, mimeType, size: scan.size, durationMs: scan.durationMs });
  return { blob: blobRef(scan.cid, mimeType, scan.size), key, durationMs: scan.durationMs };
}

/**
 * Recorded after the bytes are in place, so a row never points at a missing object; when the row cannot be
 * recorded, an object this upload created is removed again, so a failed upload leaves no object without its row.
 * An object this upload found already there may be an orphan the store janitor was removing: the janitor removes
 * only under the blob's lock, which the insert takes too, so once the row is in the object stays, and an object
 * gone by then is seen here and the row taken back (docs/operations.md#where-to-look).
 */
export async function recordOrTakeBack(store: BlobStore, sql: Sql, key: string, created: boolean, record: BlobRecord): Promise<void> {
  let inserted;
  try {
    inserted = await recordBlob(sql, record);
  } catch (error) {
    if (created) await takeBackUnrecorded(store, sql, key, record).catch(() => undefined);
    throw error;
  }
  // Only the filesystem's `created` is exclusive (a hard link fails on an existing name). Two S3 uploads of the same
  // bytes may both find no object and both copy, and the other one's failed row then takes the object back.
  if ((created && store.kind === "fs") || (await store.stat(key))) return;
  if (inserted) await unrecordBlob(sql, record);
  throw new DomainError("SERVICE_UNAVAILABLE", "the stored copy of these bytes was being removed; upload them again");
}

/**
 * Removes the object a failed upload created, as the store janitor would: under the blob's lock and only while no
 * row refers to its bytes, since a concurrent upload of the same bytes may have found the object and recorded it
 * meanwhile. When the database cannot answer either, the object stays, an orphan the janitor removes later.
 */
const takeBackUnrecorded = (store: BlobStore, sql: Sql, key: string, { appId, cid }: BlobRecord) =>
  sql.transaction(async (tx) => {
    await tx.query(lockBlobStatement, [appId, cid]);
    if ((await referencedCids(tx, appId, [cid])).size === 0) await store.delete(key);
  });
