import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { CID } from "multiformats/cid";
import * as Digest from "multiformats/hashes/digest";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { audioFixture } from "../../test/support/audio-fixtures";
import { type BlobDatabase, openBlobDatabase } from "../../test/support/blob-database";
import { type S3Emulator, startS3Emulator } from "../../test/support/s3-emulator";
import { blobRows } from "../../test/support/blob-rows";
import { storedKeys } from "../../test/support/stored-keys";
import type { S3BlobStore } from "../blobs/blob-store";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { createS3BlobStore } from "../blobs/s3-blob-store";
import { maxUploadBytes } from "../records/accepted-types";
import type { Sql } from "../sql/port";
import { DomainError } from "../domain-error";
import { type CreatedUpload, completeUpload, createUpload, uploadWindowSeconds } from "./presigned-upload";

const appId = "alpha";
const actor = "user-1";
const independentCid = (bytes: Uint8Array) =>
  CID.create(1, 0x55, Digest.create(0x12, createHash("sha256").update(bytes).digest())).toString();

let emulator: S3Emulator;
let store: S3BlobStore;
let db: BlobDatabase;

beforeAll(async () => {
  emulator = await startS3Emulator();
  store = createS3BlobStore({ bucket: emulator.bucket, client: emulator.client });
  db = await openBlobDatabase();
});
afterAll(async () => {
  await db.close();
  await emulator.stop();
});
beforeEach(async () => {
  await db.reset();
  for (const key of await storedKeys(emulator, "")) await store.delete(key);
});

const create = (mimeType: string, size: number, who = { appId, actor }) =>
  createUpload({ store, sql: db.sql, ...who, mimeType, size, now: new Date() });
const complete = (uploadId: string, who = { appId, actor }) => completeUpload({ store, sql: db.sql, ...who, uploadId, now: new Date() });

/** What a browser does with the presigned POST: the fields, then the file. */
const postForm = async (created: CreatedUpload, bytes: Buffer, contentType: string) => {
  const form = new FormData();
  for (const [name, value] of Object.entries(created.fields)) form.append(name, value);
  form.append("file", new Blob([new Uint8Array(bytes)], { type: contentType }), "clip");
  const response = await fetch(created.url, { method: "POST", body: form });
  expect(response.status).toBeLessThan(300);
};

/** s3rver does not enforce POST policies, so bytes that S3 itself would refuse are put there directly. */
const putStaged = (created: CreatedUpload, bytes: Buffer, contentType: string) =>
  emulator.client.send(new PutObjectCommand({ Bucket: emulator.bucket, Key: created.fields.key, Body: bytes, ContentType: contentType }));

const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return (error as { code: string }).code;
  }
  throw new Error("expected a rejection");
};

describe("direct-to-S3 uploads (presigned POST, then complete)", () => {
  it("the presigned POST policy pins the exact Content-Type, exactly the declared size, the staging key and a short expiry", async () => {
    const before = Date.now();
    const created = await create("audio/mpeg", 12_345);
    const policy = JSON.parse(Buffer.from(created.fields.Policy!, "base64").toString("utf8")) as {
      expiration: string;
      conditions: unknown[];
    };
    expect(policy.conditions).toContainEqual(["eq", "$Content-Type", "audio/mpeg"]);
    expect(policy.conditions).toContainEqual(["content-length-range", 12_345, 12_345]);
    expect(policy.conditions).toContainEqual({ key: `staging/${appId}/${created.uploadId}` });
    expect(policy.conditions).toContainEqual({ bucket: emulator.bucket });
    expect(created.fields["Content-Type"]).toBe("audio/mpeg");
    expect(created.fields.key).toBe(`staging/${appId}/${created.uploadId}`);
    const expiration = Date.parse(policy.expiration);
    expect(expiration).toBeGreaterThan(before);
    expect(expiration).toBeLessThanOrEqual(Date.now() + uploadWindowSeconds * 1000 + 1000);
    expect(Date.parse(created.expiresAt)).toBeLessThanOrEqual(Date.now() + uploadWindowSeconds * 1000);
  });

  it("a declared type off the list or with a parameter is UNSUPPORTED_MEDIA_TYPE, over 25 MiB FILE_TOO_LARGE, a size of 0 VALIDATION_ERROR", async () => {
    expect(await codeOf(create("audio/webm;codecs=opus", 100))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await codeOf(create("video/mp4", 100))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await codeOf(create("audio/wav", maxUploadBytes + 1))).toBe("FILE_TOO_LARGE");
    expect(await codeOf(create("audio/wav", 0))).toBe("VALIDATION_ERROR");
    expect(await db.sql.query("SELECT * FROM uploads")).toEqual([]);
  });

  it("complete streams the staged object, moves it to blobs/<appId>/<cid> and answers like the upload route", async () => {
    const fixture = await audioFixture("audio/webm");
    const created = await create("audio/webm", fixture.bytes.length);
    await postForm(created, fixture.bytes, "audio/webm");
    const result = await complete(created.uploadId);
    const cid = independentCid(fixture.bytes);
    expect(result.blob).toEqual({ $type: "blob", ref: { $link: cid }, mimeType: "audio/webm", size: fixture.bytes.length });
    expect(await storedKeys(emulator, "")).toEqual([`blobs/${appId}/${cid}`]);
    const [row] = await blobRows(db.sql, appId);
    expect(row!.durationMs).toBeGreaterThan(900);
  });

  it("bytes that are not the declared audio are UNSUPPORTED_MEDIA_TYPE: the staged object is deleted and nothing is stored", async () => {
    const text = Buffer.from("not audio\n".repeat(100));
    const created = await create("audio/wav", text.length);
    await putStaged(created, text, "audio/wav");
    expect(await codeOf(complete(created.uploadId))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await storedKeys(emulator, "")).toEqual([]);
    expect(await blobRows(db.sql, appId)).toEqual([]);
    expect(await codeOf(complete(created.uploadId))).toBe("NOT_FOUND");
  });

  it("a staged object of another size or type than declared is refused and deleted", async () => {
    const wav = (await audioFixture("audio/wav")).bytes;
    const wrongSize = await create("audio/wav", wav.length + 2);
    await putStaged(wrongSize, wav, "audio/wav");
    expect(await codeOf(complete(wrongSize.uploadId))).toBe("VALIDATION_ERROR");
    const wrongType = await create("audio/wav", wav.length);
    await putStaged(wrongType, wav, "audio/x-wav");
    expect(await codeOf(complete(wrongType.uploadId))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await storedKeys(emulator, "")).toEqual([]);
  });

  it("completing before the bytes arrived is VALIDATION_ERROR and can be retried once they have", async () => {
    const ogg = (await audioFixture("audio/ogg")).bytes;
    const created = await create("audio/ogg", ogg.length);
    expect(await codeOf(complete(created.uploadId))).toBe("VALIDATION_ERROR");
    await postForm(created, ogg, "audio/ogg");
    expect((await complete(created.uploadId)).blob.size).toBe(ogg.length);
  });

  it("an unknown uploadId, or another tenant's or actor's, is 404 NOT_FOUND, before and after its completion", async () => {
    const ogg = (await audioFixture("audio/ogg")).bytes;
    const created = await create("audio/ogg", ogg.length);
    await postForm(created, ogg, "audio/ogg");
    expect(await codeOf(complete("00000000-0000-4000-8000-000000000000"))).toBe("NOT_FOUND");
    expect(await codeOf(complete(created.uploadId, { appId: "beta", actor }))).toBe("NOT_FOUND");
    expect(await codeOf(complete(created.uploadId, { appId, actor: "user-2" }))).toBe("NOT_FOUND");
    await complete(created.uploadId);
    expect(await codeOf(complete(created.uploadId, { appId: "beta", actor }))).toBe("NOT_FOUND");
    expect(await codeOf(complete(created.uploadId, { appId, actor: "user-2" }))).toBe("NOT_FOUND");
  });

  it("a second completion is answered the same blob, so a retry whose first answer was lost gets it rather than a 404", async () => {
    const ogg = (await audioFixture("audio/ogg")).bytes;
    const created = await create("audio/ogg", ogg.length);
    await postForm(created, ogg, "audio/ogg");
    const first = await complete(created.uploadId);
    const again = await complete(created.uploadId);
    expect(again).toEqual(first);
    expect(await storedKeys(emulator, "")).toEqual([first.key]);
    expect(await blobRows(db.sql, appId)).toHaveLength(1);
  });

  it("a completion while another still runs is SERVICE_UNAVAILABLE (retry), and one whose holder died is taken over once its claim lapses", async () => {
    const ogg = (await audioFixture("audio/ogg")).bytes;
    const created = await create("audio/ogg", ogg.length);
    await postForm(created, ogg, "audio/ogg");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const recording = new Promise<void>((resolve) => (reached = resolve));
    const slow: Sql = {
      query: async (text, params) => {
        if (text.includes("INSERT INTO blobs")) {
          reached();
          await held;
        }
        return db.sql.query(text, params);
      },
      transaction: (fn) => fn(slow),
    };
    const first = completeUpload({ store, sql: slow, appId, actor, uploadId: created.uploadId, now: new Date() });
    await recording;
    expect(await codeOf(complete(created.uploadId))).toBe("SERVICE_UNAVAILABLE");
    release();
    const done = await first;
    expect(await complete(created.uploadId)).toEqual(done);

    // A holder that died (a frozen Lambda) leaves its claim; once it lapses, a retry completes the upload.
    const other = await create("audio/ogg", ogg.length);
    await postForm(other, ogg, "audio/ogg");
    await db.sql.query(`UPDATE uploads SET claimed_until = clock_timestamp() + interval '1 minute' WHERE upload_id = $1`, [other.uploadId]);
    expect(await codeOf(complete(other.uploadId))).toBe("SERVICE_UNAVAILABLE");
    await db.sql.query(`UPDATE uploads SET claimed_until = clock_timestamp() - interval '1 second' WHERE upload_id = $1`, [other.uploadId]);
    expect((await complete(other.uploadId)).blob.size).toBe(ogg.length);
  });

  it("refused bytes end the upload: a retry of its completion is 404 NOT_FOUND", async () => {
    const wav = (await audioFixture("audio/wav")).bytes;
    const created = await create("audio/ogg", wav.length);
    await putStaged(created, wav, "audio/ogg");
    expect(await codeOf(complete(created.uploadId))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await codeOf(complete(created.uploadId))).toBe("NOT_FOUND");
  });

  it("on the filesystem store both routes answer 404 NOT_FOUND", async () => {
    const dir = await mkdtemp(join(tmpdir(), "fs-presign-"));
    const fsStore = createFsBlobStore(dir);
    expect(await codeOf(createUpload({ store: fsStore, sql: db.sql, appId, actor, mimeType: "audio/wav", size: 10, now: new Date() }))).toBe("NOT_FOUND");
    expect(await codeOf(completeUpload({ store: fsStore, sql: db.sql, appId, actor, uploadId: "x", now: new Date() }))).toBe("NOT_FOUND");
    await rm(dir, { recursive: true, force: true });
  });

  it("a completion whose row cannot be recorded stores nothing and keeps its staged bytes, so a retry completes it", async () => {
    const fixture = await audioFixture("audio/ogg");
    const created = await create("audio/ogg", fixture.bytes.length);
    await postForm(created, fixture.bytes, "audio/ogg");
    const failing: Sql = {
      query: async (text, params) => {
        if (text.includes("INSERT INTO blobs")) throw new Error("database went away");
        return db.sql.query(text, params);
      },
      transaction: (fn) => fn(failing),
    };
    await expect(completeUpload({ store, sql: failing, appId, actor, uploadId: created.uploadId, now: new Date() })).rejects.toThrow(
      "database went away",
    );
    expect(await storedKeys(emulator, "blobs/")).toEqual([]);
    expect(await blobRows(db.sql, appId)).toEqual([]);
    const done = await complete(created.uploadId);
    expect(await storedKeys(emulator, "")).toEqual([done.key]);
    expect(await blobRows(db.sql, appId)).toHaveLength(1);
  });

  it.each(["SERVICE_UNAVAILABLE", "INTERNAL"] as const)(
    "a completion failing with %s (a resuming database, a lost race with the store janitor, a crashed hash worker) keeps its staged bytes, so the client's retry completes it instead of a 404",
    async (code) => {
      const fixture = await audioFixture("audio/ogg");
      const created = await create("audio/ogg", fixture.bytes.length);
      await postForm(created, fixture.bytes, "audio/ogg");
      const failing: Sql = {
        query: async (text, params) => {
          if (text.includes("INSERT INTO blobs")) throw new DomainError(code, "not the bytes' fault");
          return db.sql.query(text, params);
        },
        transaction: (fn) => fn(failing),
      };
      expect(await codeOf(completeUpload({ store, sql: failing, appId, actor, uploadId: created.uploadId, now: new Date() }))).toBe(code);
      const done = await complete(created.uploadId);
      expect(await storedKeys(emulator, "")).toEqual([done.key]);
      expect(await blobRows(db.sql, appId)).toHaveLength(1);
    },
  );
});
