/**
 * The filesystem blob store (`SVC_BLOB_DIR`): keys are paths under one directory; writes land by rename. A staged
 * upload is written with direct I/O where the filesystem takes it (fs-direct-writer.ts), else through the page
 * cache (fs-page-cache-writer.ts).
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, link, mkdir, open, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { assertSafeKey } from "./blob-key";
import { type BlobRead, type ByteRange, type FsBlobStore, settleOnce, type StagedWrite } from "./blob-store";
import { directWriter, supportsDirectIo } from "./fs-direct-writer";
import { pageCacheWriter } from "./fs-page-cache-writer";

// Temp files live in the same tree as their final keys, so the closing rename never crosses filesystems.
const stagingPrefix = "staging/";

const isMissing = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
};

/** fsync of a directory: the names linked into it survive a crash. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export interface FsBlobStoreOptions {
  /** Write staged uploads with O_DIRECT where the filesystem takes it (the default); false always writes through the page cache. */
  directIo?: boolean;
}

export function createFsBlobStore(dir: string, { directIo = true }: FsBlobStoreOptions = {}): FsBlobStore {
  // Directories this store has made: a mkdir per upload (staging, then the tenant's directory) is measurable.
  const made = new Set<string>();
  // Staging keys of writes still open here: the janitor never lists them.
  const open_ = new Set<string>();
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
    const stream = (await direct) ? directWriter(handle) : pageCacheWriter(handle);
    open_.add(key);
    const staged = settleOnce(store, key, stream, async () => {
      stream.destroy();
      await rm(path, { force: true });
    });
    return {
      stream,
      commit: (to) => staged.commit(to).finally(() => open_.delete(key)),
      discard: () => staged.discard().finally(() => open_.delete(key)),
    };
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
      const place = () =>
        link(source, target).catch(async (error: NodeJS.ErrnoException) => {
          if (error.code !== "ENOENT" || !made.delete(dirname(target))) throw error;
          await ensureDir(dirname(target));
          await link(source, target);
        });
      let created = true;
      try {
        await place();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        created = false;
        // The object is refreshed, so the janitor sees it as new and keeps it; if the janitor took it away in
        // between, this upload's own bytes take its place.
        const now = new Date();
        await utimes(target, now, now).catch(async (missing: NodeJS.ErrnoException) => {
          if (missing.code !== "ENOENT") throw missing;
          await place();
          created = true;
        });
      }
      // The new name is made durable before the caller records a row that points at it (and answers 201).
      await Promise.all([syncDirectory(dirname(target)), rm(source, { force: true })]);
      return { created };
    },

    async delete(key) {
      await rm(pathOf(key), { force: true });
    },

    async *listOlderThan(prefix, before) {
      const walk = async function* (key: string, depth: number): AsyncGenerator<string> {
        let entries;
        try {
          entries = await readdir(join(dir, ...key.split("/")), { withFileTypes: true });
        } catch (error) {
          if (isMissing(error)) return;
          throw error;
        }
        for (const entry of entries) {
          const child = `${key}/${entry.name}`;
          if (entry.isDirectory() && depth > 0) yield* walk(child, depth - 1);
          if (!entry.isFile() || open_.has(child)) continue;
          const info = await statKey(child);
          if (info && info.mtimeMs < before) yield child;
        }
      };
      yield* walk(prefix.replace(/\/$/, ""), 1);
    },

    async collect(key, before, unreferenced) {
      // Out of reach first (an atomic rename), then judged: an upload that refreshed it just before stays.
      const aside = `${stagingPrefix}collect-${randomUUID()}`;
      await ensureDir(dirname(pathOf(aside)));
      try {
        await rename(pathOf(key), pathOf(aside));
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
      const info = await statKey(aside);
      const keep = info !== null && (info.mtimeMs >= before || !(await unreferenced()));
      if (keep) await link(pathOf(aside), pathOf(key)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error; // an upload placed the same bytes meanwhile
      });
      await rm(pathOf(aside), { force: true });
      return !keep;
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
