import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach } from "vitest";
import type { BlobStore } from "../../core/blobs/blob-store";
import { createFsBlobStore } from "../../core/blobs/fs-blob-store";
import { createS3BlobStore } from "../../core/blobs/s3-blob-store";
import { startS3Emulator } from "./s3-emulator";
import { type BlobDatabase, openBlobDatabase } from "./blob-database";
import { type BlobBacking, storedKeys } from "./stored-keys";

export type OpenBlobStore = () => Promise<{ store: BlobStore; backing: BlobBacking; close(): Promise<void> }>;

/** Both blob stores, for `describe.each`: the file store in a fresh temporary directory, and S3 on its emulator. */
export const blobStores = (tempPrefix: string): [string, OpenBlobStore][] => [
  [
    "filesystem",
    async () => {
      const dir = await mkdtemp(join(tmpdir(), tempPrefix));
      return { store: createFsBlobStore(dir), backing: { dir }, close: () => rm(dir, { recursive: true, force: true }) };
    },
  ],
  [
    "S3",
    async () => {
      const emulator = await startS3Emulator();
      return { store: createS3BlobStore({ bucket: emulator.bucket, client: emulator.client }), backing: emulator, close: () => emulator.stop() };
    },
  ],
];

/**
 * A suite's hooks over one blob store and the blobs database: opened once (`use` receives them), both emptied before
 * each test, closed after the suite.
 */
export const withEmptiedBlobStore = (
  openStore: OpenBlobStore,
  use: (opened: { store: BlobStore; backing: BlobBacking; db: BlobDatabase }) => void,
) => {
  let opened: Awaited<ReturnType<OpenBlobStore>>;
  let db: BlobDatabase;
  beforeAll(async () => {
    opened = await openStore();
    db = await openBlobDatabase();
    use({ store: opened.store, backing: opened.backing, db });
  });
  afterAll(async () => {
    await opened?.close();
    await db?.close();
  });
  beforeEach(async () => {
    await db.reset();
    for (const key of await storedKeys(opened.backing, "")) await opened.store.delete(key);
  });
};
