/** The filesystem blob store (`SVC_BLOB_DIR`): keys are paths under one directory; writes land by rename. */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
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
 * A Writable into an already opened file, through the page cache (when direct I/O is off or the filesystem does not
 * take it), that only finishes once the bytes are flushed to disk. Chunks are accepted at once until a batch is
 * full, which then goes down in one writev while the next one gathers (the stream's own buffer, one more batch,
 * bounds the memory). Every few MiB a datasync starts in the background while the upload is still arriving, so the
 * fsync that `final` waits for only has the last few MiB to flush rather than the whole file (about 15 ms for
 * 25 MiB on the development disk).
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

/**
 * Direct I/O (O_DIRECT) needs the memory, the file offset and the length of each write aligned to the device's
 * logical block; 4 KiB covers every common device. The bytes then go from our buffer to the device, not through
 * the page cache: no kernel copy of each upload into freshly allocated cache pages, which measured 4-5 ms per
 * 25 MiB on warm memory and ~40 ms on a VM whose free memory the hypervisor has taken back (the bench machine),
 * and no writeback left for the closing fsync.
 */
const directAlign = 4096;
const slotBytes = batchBytes;
/**
 * Slots are carved from WebAssembly memories, the one page-aligned allocation JavaScript can ask for. Each one
 * reserves ~10 GiB of address space (V8's guard regions; it allows about a hundred), so arenas are large and few:
 * 64 slots each, taken last-in first-out, so only as many pages are touched as the busiest moment needed.
 */
const arenaSlots = 64;
const freeSlots: Buffer[] = [];

/** A page-aligned 1 MiB buffer; arenas are kept once made, and an upload holds at most two slots at a time. */
function takeSlot(): Buffer {
  const slot = freeSlots.pop();
  if (slot) return slot;
  const arena = Buffer.from(new WebAssembly.Memory({ initial: (arenaSlots * slotBytes) / 65536 }).buffer);
  for (let i = 1; i < arenaSlots; i++) freeSlots.push(arena.subarray(i * slotBytes, (i + 1) * slotBytes));
  return arena.subarray(0, slotBytes);
}

/** For tests: the aligned slots waiting for their next upload (a finished or failed upload gives its slots back). */
export const freeDirectSlots = () => freeSlots.length;

const roundUp = (n: number) => Math.ceil(n / directAlign) * directAlign;

/**
 * The Writable of `fileWriter` for a file opened with O_DIRECT: chunks are copied into aligned 1 MiB slots (the
 * caller's buffers are free as soon as the copy is made), and each full slot goes to the disk while the next one
 * fills; one write at a time, so an upload holds two slots at most. The last slot is padded to the block and the
 * file truncated back to its length. Each write returns once the device has the bytes, so the closing fsync is left
 * with the metadata and the device's cache, and there are no background flushes.
 */
function directFileWriter(opened: FileHandle): Writable {
  let handle: FileHandle | undefined = opened;
  let slot: Buffer | undefined;
  let filled = 0;
  let length = 0;
  // The write in flight (it returns its slot when done); it rejects with the upload's write error.
  let writing: Promise<void> = Promise.resolve();

  /** Starts the write of the current slot once the previous one is done; resolves when it has started. */
  const launch = async () => {
    const full = slot!;
    const bytes = filled;
    const position = length;
    slot = undefined;
    filled = 0;
    length += bytes;
    const target = await writing.then(
      () => handle,
      (error: unknown) => {
        freeSlots.push(full);
        throw error;
      },
    );
    if (!target) {
      freeSlots.push(full);
      throw new Error("staged write destroyed");
    }
    const padded = roundUp(bytes);
    full.fill(0, bytes, padded);
    writing = target.write(full, 0, padded, position).then(
      ({ bytesWritten }) => {
        freeSlots.push(full);
        if (bytesWritten !== padded) throw new Error(`short write: ${bytesWritten} of ${padded} bytes`);
      },
      (error: unknown) => {
        freeSlots.push(full);
        throw error;
      },
    );
    // Observed by the next launch, `final` or `destroy`; never an unhandled rejection meanwhile.
    writing.catch(() => undefined);
  };

  /** Copies `chunk` in; a promise only when a slot filled and had to wait for the disk. */
  const put = (chunk: Buffer): Promise<void> | undefined => {
    // Destroyed while this writev waited for the disk: take no slot that nothing would give back.
    if (!handle) return Promise.reject(new Error("staged write destroyed"));
    let at = 0;
    while (at < chunk.length) {
      slot ??= takeSlot();
      const n = Math.min(chunk.length - at, slotBytes - filled);
      chunk.copy(slot, filled, at, at + n);
      filled += n;
      at += n;
      if (filled === slotBytes) {
        const rest = chunk.subarray(at);
        return launch().then(() => put(rest));
      }
    }
    return undefined;
  };

  return new Writable({
    highWaterMark: batchBytes,
    writev(chunks, callback) {
      let i = 0;
      const next = (): void => {
        while (i < chunks.length) {
          const waiting = put(chunks[i++]!.chunk as Buffer);
          if (waiting) return void waiting.then(next, callback);
        }
        callback();
      };
      next();
    },
    final(callback) {
      (async () => {
        if (filled > 0) await launch();
        await writing;
        // The padding of the last block goes again; ftruncate is metadata the fsync below makes durable.
        if (length % directAlign !== 0) await handle!.truncate(length);
        await handle!.sync();
        await handle!.close();
        handle = undefined;
      })().then(() => callback(), callback);
    },
    destroy(error, callback) {
      if (slot) freeSlots.push(slot);
      slot = undefined;
      if (!handle) return callback(error);
      const closing = handle;
      handle = undefined;
      // A write in flight still holds the handle and its slot: close once it is done.
      writing
        .catch(() => undefined)
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

/** Whether files in `directory` take aligned O_DIRECT writes from our slots (not every filesystem does: tmpfs before Linux 6.6, some FUSE and network mounts). */
export async function supportsDirectIo(directory: string): Promise<boolean> {
  if (constants.O_DIRECT === undefined) return false;
  const path = join(directory, `direct-probe-${randomUUID()}`);
  let handle: FileHandle | undefined;
  let slot: Buffer | undefined;
  try {
    // An aligned buffer may be refused too (an address-space limit such as `ulimit -v`): then no direct I/O either.
    slot = takeSlot();
    handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT);
    const { bytesWritten } = await handle.write(slot, 0, directAlign, 0);
    return bytesWritten === directAlign;
  } catch {
    return false;
  } finally {
    if (slot) freeSlots.push(slot);
    await handle?.close().catch(() => undefined);
    await rm(path, { force: true });
  }
}

export interface FsBlobStoreOptions {
  /** Write staged uploads with O_DIRECT where the filesystem takes it (the default); false always writes through the page cache. */
  directIo?: boolean;
}

export function createFsBlobStore(dir: string, { directIo = true }: FsBlobStoreOptions = {}): FsBlobStore {
  // Directories this store has made: a mkdir per upload (staging, then the tenant's directory) is measurable.
  const made = new Set<string>();
  let direct: Promise<boolean> | undefined;
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
    // Probed once, in the staging directory itself (the filesystem the uploads land on).
    direct ??= directIo ? supportsDirectIo(dirname(path)) : Promise.resolve(false);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | ((await direct) ? constants.O_DIRECT : 0);
    let handle;
    try {
      handle = await open(path, flags);
    } catch (error) {
      // The directory was removed behind our back (a test, an operator): make it again, once.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      made.delete(dirname(path));
      await ensureDir(dirname(path));
      handle = await open(path, flags);
    }
    const stream = (await direct) ? directFileWriter(handle) : fileWriter(handle);
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
