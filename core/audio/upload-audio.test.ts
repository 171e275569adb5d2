import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CID } from "multiformats/cid";
import * as Digest from "multiformats/hashes/digest";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { audioFixture, pcmWavHeader } from "../../test/support/audio-fixtures";
import { type BlobDatabase, openBlobDatabase } from "../../test/support/blob-database";
import { type Part, multipartRequest } from "../../test/support/multipart-request";
import { blobRows } from "../../test/support/blob-rows";
import { storedKeys } from "../../test/support/stored-keys";
import type { FsBlobStore } from "../blobs/blob-store";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { acceptedMimeTypes, maxUploadBytes } from "../records/accepted-types";
import { uploadAudio } from "./upload-audio";

const appId = "alpha";
const independentCid = (bytes: Uint8Array) =>
  CID.create(1, 0x55, Digest.create(0x12, createHash("sha256").update(bytes).digest())).toString();

let dir: string;
let store: FsBlobStore;
let db: BlobDatabase;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "upload-"));
  store = createFsBlobStore(dir);
  db = await openBlobDatabase();
});
afterAll(async () => {
  await db.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await db.reset();
  for (const key of await storedKeys(store, "")) await store.delete(key);
});

const upload = (parts: Part[]) => uploadAudio({ store, sql: db.sql, appId, request: multipartRequest(parts) });
const expectNothingStored = async () => {
  expect(await storedKeys(store, "")).toEqual([]);
  expect(await blobRows(db.sql, appId)).toEqual([]);
};

describe("POST /api/v1/audio/upload (multipart ingestion)", () => {
  it.each(acceptedMimeTypes)("a %s file part is accepted and answered with its blob reference", async (mimeType) => {
    const fixture = await audioFixture(mimeType);
    const result = await upload([{ name: "file", filename: "clip", contentType: mimeType, data: fixture.bytes }]);
    const cid = independentCid(fixture.bytes);
    expect(result.blob).toEqual({ $type: "blob", ref: { $link: cid }, mimeType, size: fixture.bytes.length });
    expect(await storedKeys(store, "blobs/")).toEqual([`blobs/${appId}/${cid}`]);
  });

  const refusals: [string, () => Promise<Part[]>, string][] = [
    [
      "a codec parameter (audio/webm;codecs=opus)",
      async () => [{ name: "file", filename: "a.webm", contentType: "audio/webm;codecs=opus", data: (await audioFixture("audio/webm")).bytes }],
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    ["a type not on the list (audio/flac)", async () => [{ name: "file", filename: "a", contentType: "audio/flac", data: Buffer.from("fLaC") }], "UNSUPPORTED_MEDIA_TYPE"],
    ["a wrong type (MP3 bytes declared audio/ogg)", async () => [{ name: "file", filename: "a", contentType: "audio/ogg", data: (await audioFixture("audio/mpeg")).bytes }], "UNSUPPORTED_MEDIA_TYPE"],
    [
      "a lying Content-Type (text declared audio/wav)",
      async () => [{ name: "file", filename: "a.wav", contentType: "audio/wav", data: Buffer.from("just text, honestly\n".repeat(300)) }],
      "UNSUPPORTED_MEDIA_TYPE",
    ],
    [
      "two parts",
      async () => {
        const wav = (await audioFixture("audio/wav")).bytes;
        return [
          { name: "file", filename: "a.wav", contentType: "audio/wav", data: wav },
          { name: "file", filename: "b.wav", contentType: "audio/wav", data: wav },
        ];
      },
      "VALIDATION_ERROR",
    ],
    [
      "a non-file field beside the file",
      async () => [
        { name: "file", filename: "a.wav", contentType: "audio/wav", data: (await audioFixture("audio/wav")).bytes },
        { name: "title", data: Buffer.from("hello") },
      ],
      "VALIDATION_ERROR",
    ],
    ["a missing file field", async () => [{ name: "audio", filename: "a.wav", contentType: "audio/wav", data: (await audioFixture("audio/wav")).bytes }], "VALIDATION_ERROR"],
    ["no parts at all", async () => [], "VALIDATION_ERROR"],
  ];

  it.each(refusals)("%s is refused and nothing is stored", async (_label, parts, code) => {
    await expect(upload(await parts())).rejects.toMatchObject({ code });
    await expectNothingStored();
  });

  it("25 MiB + 1 byte is FILE_TOO_LARGE found while streaming: the body is not read to its end and nothing staged remains", async () => {
    const size = maxUploadBytes + 1;
    const request = multipartRequest([{ name: "file", filename: "big.wav", contentType: "audio/wav", data: { size: 4 * size, head: pcmWavHeader(4 * size - 2) } }]);
    await expect(uploadAudio({ store, sql: db.sql, appId, request })).rejects.toMatchObject({ code: "FILE_TOO_LARGE" });
    // Nothing reads the body any more: it is unpiped and paused, so what was read is all that ever will be.
    expect(request.body().readableFlowing).toBe(false);
    expect(request.body().listenerCount("data")).toBe(0);
    expect(request.bytesRead()).toBeLessThan(maxUploadBytes + 1024 * 1024);
    await expectNothingStored();
  });
});
