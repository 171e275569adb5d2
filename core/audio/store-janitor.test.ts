import { mkdtemp, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { pcmWav } from "../../test/support/audio-fixtures";
import { openBlobDatabase, type BlobDatabase } from "../../test/support/blob-database";
import { blobRows } from "../../test/support/blob-rows";
import { blobStores, withEmptiedBlobStore } from "../../test/support/blob-stores";
import { dataApiBackends } from "../../test/support/databases";
import { type BlobBacking, storedKeys } from "../../test/support/stored-keys";
import type { BlobStore } from "../blobs/blob-store";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { rawCid } from "../blobs/raw-cid";
import { DomainError } from "../domain-error";
import type { Sql } from "../sql/port";
import { recordBlob } from "./blob-records";
import { ingestAudio } from "./ingest-audio";
import { insertUpload } from "./upload-records";
import { sweepStore } from "./store-janitor";
import { storeVariant } from "../processing/pass-store";
import { ProviderError } from "../providers/provider-port";

const appId = "alpha";
const hour = 3_600_000;
const ages = { stagingMaxAgeMs: hour / 2, orphanMinAgeMs: hour };

const wavOf = (seed: number) => {
  const wav = pcmWav(16_000);
  wav.writeUInt16LE(seed, 44);
  return wav;
};

const stores = blobStores("janitor-");

describe.each(stores)("the store janitor on the %s store", (name, openStore) => {
  let store: BlobStore;
  let backing: BlobBacking;
  let db: BlobDatabase;
  withEmptiedBlobStore(openStore, (opened) => ({ store, backing, db } = opened));

  const put = (key: string, bytes: Buffer) => store.writeAtomic(key, Readable.from([bytes]));
  /** Two hours on: everything stored now is old by then. */
  const later = () => Date.now() + 2 * hour;

  it("removes staged uploads nobody writes, presigned uploads past their completion window and objects no row references once old; keeps referenced ones and a write still open", async () => {
    const kept = wavOf(1);
    const orphan = wavOf(2);
    await put(`blobs/${appId}/${rawCid(kept)}`, kept);
    await recordBlob(db.sql, { appId, cid: rawCid(kept), mimeType: "audio/wav", size: kept.length, durationMs: 166 });
    await put(`renditions/${appId}/${rawCid(kept)}.mp3`, Buffer.from("kept's mp3"));
    await put(`blobs/${appId}/${rawCid(orphan)}`, orphan);
    await put(`renditions/${appId}/${rawCid(orphan)}.mp3`, Buffer.from("orphan's mp3"));
    await put("staging/ingest-left-by-a-crash", Buffer.from("half an upload"));
    await put(`staging/${appId}/expired-upload`, Buffer.from("a presigned upload never completed"));
    await insertUpload(db.sql, { uploadId: "expired-upload", appId, actor: "a", mimeType: "audio/wav", size: 1, stagingKey: `staging/${appId}/expired-upload`, expiresAt: new Date(Date.now() - 2 * hour) });
    const open = await store.stage({ contentType: "audio/wav" });
    open.stream.write(Buffer.alloc(4096));

    const swept = await sweepStore({ store, sql: db.sql, now: later(), ...ages });

    expect(swept).toEqual({ stagingRemoved: 2, uploadsExpired: 1, orphansRemoved: 2 });
    const left = (await storedKeys(backing, "")).filter((key) => !key.startsWith("staging/"));
    expect(left.sort()).toEqual([`blobs/${appId}/${rawCid(kept)}`, `renditions/${appId}/${rawCid(kept)}.mp3`].sort());
    // The open write goes on and lands.
    await new Promise<void>((resolve, reject) => open.stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
    expect(await open.commit(`blobs/${appId}/late`)).toEqual({ created: true });
    expect(await store.stat(`blobs/${appId}/late`)).toEqual({ size: 4096 });
  });

  it("keeps what is younger than its age: a fresh orphan, a fresh staged upload and a presigned upload still in its window", async () => {
    await put(`blobs/${appId}/${rawCid(wavOf(3))}`, wavOf(3));
    await put("staging/ingest-fresh", Buffer.from("x"));
    await put(`staging/${appId}/in-window`, Buffer.from("y"));
    expect(await sweepStore({ store, sql: db.sql, now: Date.now(), ...ages })).toEqual({ stagingRemoved: 0, uploadsExpired: 0, orphansRemoved: 0 });
    expect(await sweepStore({ store, sql: db.sql, now: Date.now() + hour, ...ages })).toMatchObject({ stagingRemoved: 1, orphansRemoved: 1 });
    expect(await storedKeys(backing, "staging/")).toEqual([`staging/${appId}/in-window`]);
  });

  /** The database of the upload, with the janitor run to completion just before the upload inserts its row. */
  const janitorBeforeInsert = (now: () => number): Sql => ({
    async query(text, params) {
      if (text.includes("INSERT INTO blobs")) await sweepStore({ store, sql: db.sql, now: now(), ...ages });
      return db.sql.query(text, params);
    },
    transaction: (fn) => db.sql.transaction(fn),
  });

  it("an upload that placed its bytes over an old unreferenced copy, which the janitor removes before the row is in, answers 503 and leaves no row; uploaded again it is stored", async () => {
    const bytes = wavOf(4);
    const key = `blobs/${appId}/${rawCid(bytes)}`;
    await put(key, bytes);
    const failed = await ingestAudio({ store, sql: janitorBeforeInsert(later), appId, mimeType: "audio/wav", source: Readable.from([bytes]) }).catch((e) => e);
    expect(failed).toBeInstanceOf(DomainError);
    expect(failed.code).toBe("SERVICE_UNAVAILABLE");
    expect(await blobRows(db.sql, appId)).toEqual([]);
    expect(await store.stat(key)).toBeNull();

    await ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source: Readable.from([bytes]) });
    expect(await blobRows(db.sql, appId)).toHaveLength(1);
    const read = await store.read(key);
    const chunks: Buffer[] = [];
    await pipeline(read!.stream, async function* (source) {
      for await (const chunk of source) chunks.push(chunk as Buffer);
    });
    expect(Buffer.concat(chunks)).toEqual(bytes);
  });

  it("a processed variant whose bytes the janitor removed (an old orphan copy of the same bytes) just before its row went in is not recorded: the stage runs again, and no post points at a missing object", async () => {
    const bytes = wavOf(6);
    const cid = rawCid(bytes);
    const key = `blobs/${appId}/${cid}`;
    const rkey = "3kvariantrace";
    await db.sql.query(`INSERT INTO posts (app_id, rkey, record, cid, author_id) VALUES ($1, $2, $3::json, 'bafyrecord', 'author')`, [
      appId,
      rkey,
      JSON.stringify({ $type: "dev.svc.audio.post", text: "x", createdAt: new Date().toISOString() }),
    ]);
    await db.sql.query(`INSERT INTO post_enrichment (app_id, rkey, lease_token, lease_until) VALUES ($1, $2, 'token', now() + interval '1 hour')`, [appId, rkey]);
    // The pass's output met an old copy of its bytes (a pass that died before recording left it), kept as it was.
    await put(key, bytes);
    expect(await sweepStore({ store, sql: db.sql, now: later(), ...ages })).toMatchObject({ orphansRemoved: 1 });
    const variant = { appId, rkey, token: "token", stage: "trim" as const, audio: { appId, cid, mimeType: "audio/wav" as const, size: bytes.length, durationMs: 1000 }, now: new Date() };
    const failed = await db.sql.transaction((tx) => storeVariant(tx, store, variant)).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ProviderError);
    expect((failed as ProviderError).disposition).toBe("retry");
    expect(await blobRows(db.sql, appId)).toEqual([]);
    expect(await db.sql.query(`SELECT audio_cid FROM post_enrichment WHERE app_id = $1 AND rkey = $2`, [appId, rkey])).toEqual([{ audio_cid: null }]);

    // The stage's next run writes the bytes again, and its variant is recorded.
    await put(key, bytes);
    await db.sql.transaction((tx) => storeVariant(tx, store, variant));
    expect(await db.sql.query(`SELECT audio_cid FROM post_enrichment WHERE app_id = $1 AND rkey = $2`, [appId, rkey])).toEqual([{ audio_cid: cid }]);
  });

  it.runIf(name === "filesystem")("an upload that meets an hour-old unreferenced copy of its bytes refreshes it, so the janitor keeps it and the upload is stored", async () => {
    const bytes = wavOf(5);
    const key = `blobs/${appId}/${rawCid(bytes)}`;
    await put(key, bytes);
    const path = join((backing as { dir: string }).dir, ...key.split("/"));
    await utimes(path, new Date(Date.now() - 2 * hour), new Date(Date.now() - 2 * hour));
    const stored = await ingestAudio({ store, sql: janitorBeforeInsert(() => Date.now()), appId, mimeType: "audio/wav", source: Readable.from([bytes]) });
    expect(stored.key).toBe(key);
    expect(await blobRows(db.sql, appId)).toHaveLength(1);
    expect(await store.stat(key)).toEqual({ size: bytes.length });
  });
});

describe.each(dataApiBackends)("the blob's lock over the Data API ($name), which returns no void column", (backend) => {
  it("the janitor removes an old orphan, and an upload whose row fails takes its object back, each under the lock", async () => {
    const db = await openBlobDatabase(backend);
    const dir = await mkdtemp(join(tmpdir(), "janitor-data-api-"));
    try {
      const store = createFsBlobStore(dir);
      const orphan = wavOf(7);
      await store.writeAtomic(`blobs/${appId}/${rawCid(orphan)}`, Readable.from([orphan]));
      expect(await sweepStore({ store, sql: db.sql, now: Date.now() + 2 * hour, ...ages })).toMatchObject({ orphansRemoved: 1 });

      const failing: Sql = {
        query: (text, params) => (text.includes("INSERT INTO blobs") ? Promise.reject(new Error("database went away")) : db.sql.query(text, params)),
        transaction: (fn) => db.sql.transaction(fn),
      };
      const upload = wavOf(8);
      await expect(ingestAudio({ store, sql: failing, appId, mimeType: "audio/wav", source: Readable.from([upload]) })).rejects.toThrow("database went away");
      expect(await store.stat(`blobs/${appId}/${rawCid(upload)}`)).toBeNull();
    } finally {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
