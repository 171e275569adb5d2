/** Moves audio between the shared blob store and the rendition's temp directory: ffmpeg works on local files. */
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createRawCidHasher } from "../blobs/raw-cid";
import { blobKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";

/** The source blob named by a request does not exist (404). */
export class SourceMissingError extends Error {
  constructor(key: string) {
    super(`no blob at ${key}`);
    this.name = "SourceMissingError";
  }
}

/** Copies `key` to `path`; the size of what was copied. */
export async function fetchBlob(store: BlobStore, key: string, path: string): Promise<number> {
  const found = await store.read(key);
  if (!found) throw new SourceMissingError(key);
  await pipeline(found.stream, createWriteStream(path));
  return found.size;
}

export interface StoredFile {
  cid: string;
  size: number;
}

/** Stores a file at `blobs/<appId>/<cid of its bytes>`, hashing as it streams (one read). */
export async function storeContentAddressed(store: BlobStore, appId: string, path: string, contentType: string): Promise<StoredFile> {
  const hasher = createRawCidHasher();
  let size = 0;
  const staged = await store.stage({ contentType });
  try {
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hasher.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    await pipeline(createReadStream(path), tap, staged.stream);
    const cid = hasher.cid();
    await staged.commit(blobKey(appId, cid));
    return { cid, size };
  } catch (error) {
    await staged.discard();
    throw error;
  }
}

/** Stores a file at a derived key (a rendition); the CID and size of its bytes. */
export async function storeAt(store: BlobStore, key: string, path: string, contentType: string): Promise<StoredFile> {
  const hasher = createRawCidHasher();
  for await (const chunk of createReadStream(path)) hasher.update(chunk as Buffer);
  await store.writeAtomic(key, createReadStream(path), { contentType });
  return { cid: hasher.cid(), size: (await stat(path)).size };
}
