/**
 * The filesystem store's direct-I/O writer (O_DIRECT): the bytes go from our aligned slots to the device, not
 * through the page cache, so the kernel copies no upload into freshly allocated cache pages and leaves no writeback
 * for the closing fsync. `npm run bench` shows what each writer costs (fs-blob-store.bench.ts).
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { directAlign, returnSlot, slotBytes, takeSlot } from "./fs-aligned-slots";

const roundUp = (n: number) => Math.ceil(n / directAlign) * directAlign;

/**
 * A Writable into a file opened with O_DIRECT that only finishes once the bytes are on disk: chunks are copied into
 * aligned slots (the caller's buffers are free as soon as the copy is made), and each full slot goes to the disk
 * while the next one fills; one write at a time, so an upload holds two slots at most. The last slot is padded to
 * the block and the file truncated back to its length. Each write returns once the device has the bytes, so the
 * closing fsync is left with the metadata and the device's cache, and there are no background flushes.
 */
export function directWriter(opened: FileHandle): Writable {
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
        returnSlot(full);
        throw error;
      },
    );
    if (!target) {
      returnSlot(full);
      throw new Error("staged write destroyed");
    }
    const padded = roundUp(bytes);
    full.fill(0, bytes, padded);
    writing = target.write(full, 0, padded, position).then(
      ({ bytesWritten }) => {
        returnSlot(full);
        if (bytesWritten !== padded) throw new Error(`short write: ${bytesWritten} of ${padded} bytes`);
      },
      (error: unknown) => {
        returnSlot(full);
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
    highWaterMark: slotBytes,
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
      if (slot) returnSlot(slot);
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
    if (slot) returnSlot(slot);
    await handle?.close().catch(() => undefined);
    await rm(path, { force: true });
  }
}
