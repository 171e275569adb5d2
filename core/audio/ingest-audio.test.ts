import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { CID } from "multiformats/cid";
import * as Digest from "multiformats/hashes/digest";
import { describe, expect, it } from "vitest";
import { audioFixture, pcmWavHeader, videoFixture } from "../../test/support/audio-fixtures";
import { openBlobDatabase, type BlobDatabase } from "../../test/support/blob-database";
import { blobRows } from "../../test/support/blob-rows";
import { blobStores, withEmptiedBlobStore } from "../../test/support/blob-stores";
import { startS3Emulator } from "../../test/support/s3-emulator";
import { type BlobBacking, storedKeys } from "../../test/support/stored-keys";
import type { BlobStore } from "../blobs/blob-store";
import { createS3BlobStore } from "../blobs/s3-blob-store";
import { acceptedMimeTypes, maxUploadBytes } from "../records/accepted-types";
import type { Sql } from "../sql/port";
import { ingestAudio } from "./ingest-audio";

const appId = "alpha";
const independentCid = (bytes: Uint8Array) =>
  CID.create(1, 0x55, Digest.create(0x12, createHash("sha256").update(bytes).digest())).toString();

/** Streams `bytes` in small chunks, as a network would. */
const streamOf = (bytes: Buffer, chunk = 16 * 1024) => {
  let at = 0;
  return new Readable({
    read() {
      if (at >= bytes.length) this.push(null);
      else this.push(bytes.subarray(at, (at += chunk)));
    },
  });
};

/** A WAV of `size` bytes (header, then silence) produced on demand; `pulled()` says how much was read. */
const lazyWav = (size: number) => {
  const header = pcmWavHeader(size);
  let pulled = 0;
  const chunk = 64 * 1024;
  const stream = new Readable({
    highWaterMark: chunk,
    read() {
      if (pulled >= size) return void this.push(null);
      const next = pulled === 0 ? header : Buffer.alloc(Math.min(chunk, size - pulled));
      pulled += next.length;
      this.push(next);
    },
  });
  return { stream, pulled: () => pulled };
};

const stores = blobStores("ingest-");

describe.each(stores)("audio ingestion into the %s store", (_name, openStore) => {
  let store: BlobStore;
  let backing: BlobBacking;
  let db: BlobDatabase;
  withEmptiedBlobStore(openStore, (opened) => ({ store, backing, db } = opened));

  const expectNothingStored = async () => {
    expect(await storedKeys(backing, "")).toEqual([]);
    expect(await blobRows(db.sql, appId)).toEqual([]);
  };

  it.each(acceptedMimeTypes)("real %s audio is accepted at blobs/<appId>/<cid>, its CID that of its bytes, its duration measured", async (mimeType) => {
    const fixture = await audioFixture(mimeType);
    const cid = independentCid(fixture.bytes);
    const result = await ingestAudio({ store, sql: db.sql, appId, mimeType, source: streamOf(fixture.bytes) });
    expect(db.statements()).toBe(1);
    expect(result.blob).toEqual({ $type: "blob", ref: { $link: cid }, mimeType, size: fixture.bytes.length });
    expect(result.key).toBe(`blobs/${appId}/${cid}`);
    expect(await storedKeys(backing, "")).toEqual([`blobs/${appId}/${cid}`]);
    const [row] = await blobRows(db.sql, appId);
    expect(row).toMatchObject({ appId, cid, mimeType, size: fixture.bytes.length });
    // One second of tone; encoders add a little priming and padding.
    expect(row!.durationMs).toBeGreaterThanOrEqual(950);
    expect(row!.durationMs).toBeLessThanOrEqual(1100);
  });

  it("a codec parameter (audio/webm;codecs=opus) is UNSUPPORTED_MEDIA_TYPE and nothing is stored", async () => {
    const fixture = await audioFixture("audio/webm");
    const source = streamOf(fixture.bytes);
    await expect(ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/webm;codecs=opus", source })).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
    });
    expect(source.destroyed).toBe(true);
    await expectNothingStored();
  });

  it("bytes of another type than declared (a WAV declared audio/mpeg) are UNSUPPORTED_MEDIA_TYPE and nothing is stored", async () => {
    const fixture = await audioFixture("audio/wav");
    await expect(ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/mpeg", source: streamOf(fixture.bytes) })).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
    });
    await expectNothingStored();
  });

  it("a lying Content-Type (text declared audio/wav) is UNSUPPORTED_MEDIA_TYPE and nothing is stored", async () => {
    const text = Buffer.from("this is not audio at all, just some text\n".repeat(500));
    await expect(ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source: streamOf(text) })).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
    });
    await expectNothingStored();
  });

  it("video in an audio container (WebM, MP4) is UNSUPPORTED_MEDIA_TYPE and nothing is stored", async () => {
    for (const [container, mimeType] of [
      ["webm", "audio/webm"],
      ["mp4", "audio/mp4"],
    ] as const) {
      const video = await videoFixture(container);
      await expect(ingestAudio({ store, sql: db.sql, appId, mimeType, source: streamOf(video.bytes) }), container).rejects.toMatchObject({
        code: "UNSUPPORTED_MEDIA_TYPE",
      });
    }
    await expectNothingStored();
  });

  it("magic numbers alone are not enough: a WAV header over garbage that does not parse is refused", async () => {
    const bytes = Buffer.concat([Buffer.from("RIFF\x24\x00\x00\x00WAVEjunk", "latin1"), Buffer.alloc(5000, 0x41)]);
    await expect(ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source: streamOf(bytes) })).rejects.toMatchObject({
      code: "UNSUPPORTED_MEDIA_TYPE",
    });
    await expectNothingStored();
  });

  it("25 MiB + 1 byte is FILE_TOO_LARGE, found while streaming: reading stops and nothing staged remains", async () => {
    const source = lazyWav(4 * maxUploadBytes);
    await expect(ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source: source.stream })).rejects.toMatchObject({
      code: "FILE_TOO_LARGE",
    });
    expect(source.stream.destroyed).toBe(true);
    // Stopped at the limit (plus what was already buffered), far short of the 100 MiB on offer.
    expect(source.pulled()).toBeGreaterThan(maxUploadBytes);
    expect(source.pulled()).toBeLessThan(maxUploadBytes + 1024 * 1024);
    await expectNothingStored();
  });

  it("exactly 25 MiB is accepted", async () => {
    const source = lazyWav(maxUploadBytes);
    const result = await ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source: source.stream });
    expect(result.blob.size).toBe(maxUploadBytes);
    expect(result.durationMs).toBe(Math.round(((maxUploadBytes - 44) / 96_000) * 1000));
    expect(await store.stat(result.key)).toEqual({ size: maxUploadBytes });
  });

  it("the same bytes uploaded twice give the same CID, one stored object and one row", async () => {
    const fixture = await audioFixture("audio/ogg");
    const first = await ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/ogg", source: streamOf(fixture.bytes) });
    const second = await ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/ogg", source: streamOf(fixture.bytes, 1000) });
    expect(second.blob).toEqual(first.blob);
    expect(await storedKeys(backing, "")).toEqual([first.key]);
    expect(await blobRows(db.sql, appId)).toHaveLength(1);
  });

  /** The database accepting every statement but the blob's row, as when it fails between the bytes and the row. */
  const failingRows = (): Sql => {
    const sql: Sql = {
      query: async (text, params) => {
        if (text.includes("INSERT INTO blobs")) throw new Error("database went away");
        return db.sql.query(text, params);
      },
      transaction: (fn) => fn(sql),
    };
    return sql;
  };

  it("a failed upload stores nothing: when its row cannot be recorded, the object it created is taken back", async () => {
    const fixture = await audioFixture("audio/m4a");
    await expect(ingestAudio({ store, sql: failingRows(), appId, mimeType: "audio/m4a", source: streamOf(fixture.bytes) })).rejects.toThrow(
      "database went away",
    );
    await expectNothingStored();
  });

  it("an upload whose row fails leaves alone the object an earlier upload of the same bytes stored", async () => {
    const fixture = await audioFixture("audio/mp4");
    const first = await ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/mp4", source: streamOf(fixture.bytes) });
    await expect(ingestAudio({ store, sql: failingRows(), appId, mimeType: "audio/mp4", source: streamOf(fixture.bytes) })).rejects.toThrow(
      "database went away",
    );
    expect(await storedKeys(backing, "")).toEqual([first.key]);
  });

  it("an upload whose row fails leaves alone the object a concurrent upload of the same bytes recorded meanwhile", async () => {
    const fixture = await audioFixture("audio/wav");
    let concurrent: Awaited<ReturnType<typeof ingestAudio>> | undefined;
    // The first upload created the object; before its insert fails, a second upload of the same bytes finds that
    // object and records its row.
    const sql: Sql = {
      query: async (text, params) => {
        if (text.includes("INSERT INTO blobs") && !concurrent) {
          concurrent = await ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source: streamOf(fixture.bytes) });
          throw new Error("database went away");
        }
        return db.sql.query(text, params);
      },
      transaction: (fn) => fn(sql),
    };
    await expect(ingestAudio({ store, sql, appId, mimeType: "audio/wav", source: streamOf(fixture.bytes) })).rejects.toThrow("database went away");
    expect(await blobRows(db.sql, appId)).toHaveLength(1);
    expect(await storedKeys(backing, "")).toEqual([concurrent!.key]);
    expect(await store.stat(concurrent!.key)).not.toBeNull();
  });

  it("a source stream failing mid-upload leaves no object, no staging debris and no row", async () => {
    const fixture = await audioFixture("audio/wav");
    let sent = false;
    const source = new Readable({
      read() {
        if (!sent) {
          sent = true;
          this.push(fixture.bytes.subarray(0, 50_000));
        } else this.destroy(new Error("client went away"));
      },
    });
    await expect(ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source })).rejects.toThrow("client went away");
    await expectNothingStored();
  });
});

describe("audio ingestion into S3, two uploads of the same bytes at once", () => {
  it("when both placed the object and the first one's row fails, the second is refused 503 rather than keep a row whose object was taken back", async () => {
    const s3 = await startS3Emulator();
    const db = await openBlobDatabase();
    try {
      // Both uploads look for the object before either copies it, so both copy and both say `created`.
      let heads = 0;
      let bothLooked!: () => void;
      const looked = new Promise<void>((resolve) => (bothLooked = resolve));
      const send = s3.client.send.bind(s3.client) as (command: unknown) => Promise<unknown>;
      Object.assign(s3.client, {
        send: async (command: unknown) => {
          if (!(command instanceof HeadObjectCommand) || !command.input.Key?.startsWith("blobs/") || heads >= 2) return send(command);
          const answer = send(command);
          if (++heads === 2) bothLooked();
          await looked;
          return answer;
        },
      });
      const store = createS3BlobStore({ bucket: s3.bucket, client: s3.client });
      // The first one's insert fails once the second reaches its own; the second inserts after the first took back.
      let secondInserting!: () => void;
      const secondAtInsert = new Promise<void>((resolve) => (secondInserting = resolve));
      let firstSettled!: () => void;
      const firstDone = new Promise<void>((resolve) => (firstSettled = resolve));
      const wrapped = (before: () => Promise<void>): Sql => ({
        query: async (text, params) => {
          if (text.includes("INSERT INTO blobs")) await before();
          return db.sql.query(text, params);
        },
        transaction: (fn) => db.sql.transaction(fn),
      });
      const failing = wrapped(async () => {
        await secondAtInsert;
        throw new Error("database went away");
      });
      const waiting = wrapped(async () => {
        secondInserting();
        await firstDone;
      });
      const bytes = (await audioFixture("audio/wav")).bytes;
      const first = ingestAudio({ store, sql: failing, appId, mimeType: "audio/wav", source: streamOf(bytes) }).finally(firstSettled);
      const second = ingestAudio({ store, sql: waiting, appId, mimeType: "audio/wav", source: streamOf(bytes) });
      await expect(first).rejects.toThrow("database went away");
      await expect(second).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
      expect(heads).toBe(2);
      // No row without its object: the retry stores both again.
      expect(await blobRows(db.sql, appId)).toEqual([]);
      const retried = await ingestAudio({ store, sql: db.sql, appId, mimeType: "audio/wav", source: streamOf(bytes) });
      expect(await store.stat(retried.key)).not.toBeNull();
      expect(await blobRows(db.sql, appId)).toHaveLength(1);
    } finally {
      await db.close();
      await s3.stop();
    }
  });
});
