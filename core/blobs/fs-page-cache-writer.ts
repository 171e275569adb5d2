/** The filesystem store's writer through the page cache: when direct I/O is off, or the filesystem does not take it. */
import type { FileHandle } from "node:fs/promises";
import { Writable } from "node:stream";

/** Bytes written between two background flushes: the final fsync then waits on at most this much. */
const flushEveryBytes = 4 * 1024 * 1024;

/** Chunks are gathered up to this much and go down in one writev: a write per 64 KiB socket read costs main-thread time. */
export const batchBytes = 1024 * 1024;

/**
 * A Writable into an already opened file that only finishes once the bytes are flushed to disk. Chunks are accepted
 * at once until a batch is full, which then goes down in one writev while the next one gathers (the stream's own
 * buffer, one more batch, bounds the memory). Every few MiB a datasync starts in the background while the upload is
 * still arriving, so the fsync that `final` waits for only has the last few MiB to flush rather than the whole file.
 */
export function pageCacheWriter(opened: FileHandle): Writable {
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
