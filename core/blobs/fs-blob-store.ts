/** The filesystem blob store (`SVC_BLOB_DIR`): keys are paths under one directory; writes land by rename. */
import { randomUUID } from "node:crypto";
import { type FileHandle, link, mkdir, open, readdir, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { assertSafeKey } from "./blob-key";
import { type BlobRead, type ByteRange, type FsBlobStore, settleOnce, type StagedWrite } from "./blob-store";

// Temp files live in the same tree as their final keys, so the closing rename never crosses filesystems.
const stagingPrefix = "staging/";

const isMissing = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
};

/** Bytes written between two background flushes: the final fsync then waits on at most this much. */
const flushEveryBytes = 4 * 1024 * 1024;

/** Chunks are gathered up to this much and go down in one writev: a write per 64 KiB socket read costs main-thread time. */
const batchBytes = 1024 * 1024;

/**
 * A Writable into an already opened file that only finishes once the bytes are flushed to disk. Chunks are
 * accepted at once until a batch is full, which then goes down in one writev while the next one gathers (the
 * stream's own buffer, one more batch, bounds the memory). Every few MiB a datasync starts in the background while
 * the upload is still arriving, so the fsync that `final` waits for only has the last few MiB to flush rather than
 * the whole file (about 15 ms for 25 MiB on the development disk).
 */
function fileWriter(opened: FileHandle): Writable {
  let handle: FileHandle | undefined = opened;
  let batch: Buffer[] = [];
  let batched = 0;
  let unflushed = 0;
  let flushing: Promise<void> = Promise.resolve();
  let flushBusy = false;
  let flushFailed: unknown;

  const writeBatch = (callback: (error?: Error | null) => void) => {
    const buffers = batch;
    const expected = batched;
    batch = [];
    batched = 0;
    if (expected === 0) return callback();
    handle!.writev(buffers).then(({ bytesWritten }) => {
      // A regular file is only written short when the disk is full or the file too big: the upload fails.
      if (bytesWritten !== expected) return callback(new Error(`short write: ${bytesWritten} of ${expected} bytes`));
      unflushed += bytesWritten;
      const flushed = handle;
      // One flush at a time: on a busy disk queued flushes would each wait for a journal commit, falling behind.
      if (flushed && unflushed >= flushEveryBytes && !flushBusy) {
        unflushed = 0;
        flushBusy = true;
        flushing = flushed
          .datasync()
          .catch((error: unknown) => void (flushFailed ??= error))
          .finally(() => (flushBusy = false));
      }
      callback(flushFailed as Error | undefined);
    }, callback);
  };

  return new Writable({
    highWaterMark: batchBytes,
    writev(chunks, callback) {
      for (const { chunk } of chunks) {
        batch.push(chunk as Buffer);
        batched += (chunk as Buffer).length;
      }
      if (batched < batchBytes) return callback();
      writeBatch(callback);
    },
    final(callback) {
      writeBatch((error) => {
        if (error) return callback(error);
        flushing
          .then(() => {
            if (flushFailed) throw flushFailed;
            return handle!.sync();
          })
          .then(() => handle!.close())
          .then(() => {
            handle = undefined;
            callback();
          }, callback);
      });
    },
    destroy(error, callback) {
      batch = [];
      if (!handle) return callback(error);
      const closing = handle;
      handle = undefined;
      // A background flush may still hold the handle: close once it is done (close waits for it anyway).
      flushing
        .then(() => closing.close())
        .then(
          () => callback(error),
          () => callback(error),
        );
    },
  });
}

/** fsync of a directory: the names linked into it survive a crash. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function createFsBlobStore(dir: string): FsBlobStore {
  // Directories this store has made: a mkdir per upload (staging, then the tenant's directory) is measurable.
  const made = new Set<string>();
  const ensureDir = async (path: string) => {
    if (made.has(path)) return;
    await mkdir(path, { recursive: true });
    made.add(path);
  };

  const pathOf = (key: string) => {
    assertSafeKey(key);
    return join(dir, ...key.split("/"));
  };

  const statKey = async (key: string) => {
    try {
      const info = await stat(pathOf(key));
      return info.isFile() ? info : null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  };

  const versionOf = (info: { size: number; mtimeMs: number; ino: number }) => `${info.ino}-${info.size}-${info.mtimeMs}`;

  async function stage(): Promise<StagedWrite> {
    const key = `${stagingPrefix}ingest-${randomUUID()}`;
    const path = pathOf(key);
    // Opened here, not lazily in the stream, so a discard can never race the file's creation.
    await ensureDir(dirname(path));
    let handle;
    try {
      handle = await open(path, "wx");
    } catch (error) {
      // The directory was removed behind our back (a test, an operator): make it again, once.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      made.delete(dirname(path));
      await ensureDir(dirname(path));
      handle = await open(path, "wx");
    }
    const stream = fileWriter(handle);
    return settleOnce(store, key, stream, async () => {
      stream.destroy();
      await rm(path, { force: true });
    });
  }

  const store: FsBlobStore = {
    kind: "fs",
    dir,

    async stat(key) {
      const info = await statKey(key);
      return info ? { size: info.size } : null;
    },

    async read(key, range?: ByteRange): Promise<BlobRead | null> {
      let handle: FileHandle;
      try {
        handle = await open(pathOf(key), "r");
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
      try {
        const info = await handle.stat();
        if (!info.isFile()) {
          await handle.close();
          return null;
        }
        const stream = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
        return { stream, size: info.size, version: versionOf(info) };
      } catch (error) {
        await handle.close();
        throw error;
      }
    },

    async writeAtomic(key, source: Readable) {
      assertSafeKey(key);
      const staged = await stage();
      try {
        await pipeline(source, staged.stream);
        await staged.commit(key);
      } catch (error) {
        await staged.discard();
        throw error;
      }
    },

    stage,

    async move(from, to, options) {
      const source = pathOf(from);
      const target = pathOf(to);
      if (options?.ifVersion !== undefined) {
        const info = await statKey(from);
        if (!info || versionOf(info) !== options.ifVersion) throw new Error(`blob ${from} changed before it was moved`);
      }
      await ensureDir(dirname(target));
      // link, not rename: it refuses an existing target, so of two racing moves to one key exactly one creates it.
      let created = true;
      try {
        await link(source, target).catch(async (error: NodeJS.ErrnoException) => {
          if (error.code !== "ENOENT" || !made.delete(dirname(target))) throw error;
          await ensureDir(dirname(target));
          await link(source, target);
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        created = false;
      }
      // The new name is made durable before the caller records a row that points at it (and answers 201).
      await Promise.all([syncDirectory(dirname(target)), rm(source, { force: true })]);
      return { created };
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },

    async probe() {
      try {
        const root = await stat(dir);
        if (!root.isDirectory()) throw new Error(`SVC_BLOB_DIR ${dir} is not a directory`);
      } catch (error) {
        // Nothing was ever written: the directory is created by the first upload.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return "empty";
        throw error;
      }
      let tenants;
      try {
        tenants = await readdir(join(dir, "blobs"), { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return "empty";
        throw error;
      }
      for (const tenant of tenants) {
        if (!tenant.isDirectory()) continue;
        const blobs = await readdir(join(dir, "blobs", tenant.name));
        if (blobs.length > 0) return "present";
      }
      return "empty";
    },
  };
  return store;
}
