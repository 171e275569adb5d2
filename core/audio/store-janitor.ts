/**
 * What a crash leaves in the blob store, removed (docs/operations.md#debris-in-the-blob-store): staging files no
 * upload is writing any more, presigned uploads past their completion window, and stored objects (originals and their
 * renditions) that no row references, once older than an upload or a pass could take to record them.
 */
import type { BlobStore } from "../blobs/blob-store";
import { isRawCid } from "../blobs/raw-cid";
import type { Sql } from "../sql/port";
import { isAppId } from "../tenancy/app-id";
import { lockBlobStatement, referencedCids } from "./blob-records";
import { completionGraceSeconds, uploadWindowSeconds } from "./presigned-upload";

export interface StoreJanitorOptions {
  store: BlobStore;
  sql: Sql;
  now: number;
  /** A staged upload not written for this long is debris (a live upload writes at least every few minutes). */
  stagingMaxAgeMs: number;
  /** An unreferenced object younger than this may be an upload or a pass about to record it. */
  orphanMinAgeMs: number;
}

export interface StoreSweep {
  stagingRemoved: number;
  uploadsExpired: number;
  orphansRemoved: number;
}

/** A presigned upload's staged object: `staging/<appId>/<uploadId>`, completable until its window and grace end. */
const presignedLifetimeMs = (uploadWindowSeconds + completionGraceSeconds + 60) * 1000;

const page = 200;

export async function sweepStore({ store, sql, now, stagingMaxAgeMs, orphanMinAgeMs }: StoreJanitorOptions): Promise<StoreSweep> {
  const swept: StoreSweep = { stagingRemoved: 0, uploadsExpired: 0, orphansRemoved: 0 };
  // Staged uploads (`staging/<name>`) by their own age, presigned ones (`staging/<appId>/<uploadId>`) by theirs.
  for (const [segments, before] of [[2, now - stagingMaxAgeMs], [3, now - presignedLifetimeMs]] as const) {
    for await (const key of store.listOlderThan("staging/", before)) {
      if (key.split("/").length !== segments) continue;
      await store.delete(key);
      swept.stagingRemoved += 1;
    }
  }
  // A completion after its grace is refused anyway: the row is of no more use.
  const expired = await sql.query(`DELETE FROM uploads WHERE expires_at < $1 RETURNING upload_id`, [new Date(now - (completionGraceSeconds + 60) * 1000)]);
  swept.uploadsExpired = expired.length;

  const before = now - orphanMinAgeMs;
  for (const prefix of ["blobs/", "renditions/"]) {
    let batch: Candidate[] = [];
    const flush = async () => {
      swept.orphansRemoved += await collectUnreferenced(store, sql, batch, before);
      batch = [];
    };
    for await (const key of store.listOlderThan(prefix, before)) {
      const candidate = candidateOf(key);
      if (!candidate) continue; // not a name this service writes: left alone
      batch.push(candidate);
      if (batch.length >= page) await flush();
    }
    await flush();
  }
  return swept;
}

interface Candidate {
  key: string;
  appId: string;
  cid: string;
}

/** `blobs/<appId>/<cid>` or `renditions/<appId>/<cid>.<format>`: the blob the object belongs to. */
const candidateOf = (key: string): Candidate | undefined => {
  const [, appId = "", name = ""] = key.split("/");
  const cid = key.startsWith("renditions/") ? name.replace(/\.[a-z0-9]+$/, "") : name;
  return isAppId(appId) && isRawCid(cid) ? { key, appId, cid } : undefined;
};

/** The CIDs among `cids` (of one tenant) that a row references: an upload's row, or a post's current variant. */
const collectUnreferenced = async (store: BlobStore, sql: Sql, batch: Candidate[], before: number): Promise<number> => {
  let removed = 0;
  const byApp = new Map<string, Candidate[]>();
  for (const candidate of batch) byApp.set(candidate.appId, [...(byApp.get(candidate.appId) ?? []), candidate]);
  for (const [appId, candidates] of byApp) {
    const referenced = await referencedCids(sql, appId, [...new Set(candidates.map((c) => c.cid))]);
    for (const { key, cid } of candidates) {
      if (referenced.has(cid)) continue;
      // Under the blob's lock, which an upload's insert of its row takes too (recordBlob): checked again, removed.
      const gone = await sql.transaction(async (tx) => {
        await tx.query(lockBlobStatement, [appId, cid]);
        return store.collect(key, before, async () => (await referencedCids(tx, appId, [cid])).size === 0);
      });
      if (gone) removed += 1;
    }
  }
  return removed;
};
