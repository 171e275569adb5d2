/** The blob store port: the filesystem adapter (embedded default) and the S3 adapter both implement it. */
import type { Readable, Writable } from "node:stream";

/** Inclusive byte offsets, as in an HTTP `Range` header. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobRead {
  /** The requested bytes (all of them, or the range). */
  stream: Readable;
  /** Size of the whole object, whatever the range. */
  size: number;
  /** Changes whenever the object's bytes may have changed (S3 ETag); `move` can be made conditional on it. */
  version: string;
  /** Content-Type the object was stored with, when the store keeps one (S3). */
  contentType?: string;
}

/**
 * Bytes written before their final key is known (content addressing: the key is the hash of the bytes).
 * `stream` finishes only once the bytes are durably staged; then `commit` or `discard`.
 */
export interface StagedWrite {
  readonly stream: Writable;
  /** Moves the staged bytes to `key`; when `key` already exists the bytes are identical by construction and dropped. */
  commit(key: string): Promise<{ created: boolean }>;
  /** Removes whatever was staged; safe to call at any point, and more than once. */
  discard(): Promise<void>;
}

interface BlobStoreBase {
  stat(key: string): Promise<{ size: number } | null>;
  /** null when there is no such object. */
  read(key: string, range?: ByteRange): Promise<BlobRead | null>;
  /** Readers see no object or all of it, never part; a failing source leaves neither object nor debris. */
  writeAtomic(key: string, source: Readable, options?: { contentType?: string }): Promise<void>;
  stage(options?: { contentType?: string }): Promise<StagedWrite>;
  /**
   * Atomic rename; when `to` exists already the source is just removed (content-addressed keys). `created` says
   * whether this call put the object at `to`, so a caller whose row then fails to record can take back only its own.
   * Exclusive on the filesystem only: on S3 two concurrent calls may both find no object and both say `created`.
   */
  move(from: string, to: string, options?: { ifVersion?: string }): Promise<{ created: boolean }>;
  delete(key: string): Promise<void>;
  /** `/health`: whether any original blob is stored; throws when the store cannot be reached. */
  probe(): Promise<"empty" | "present">;
  /**
   * Keys under `prefix` (`staging/`, `blobs/`, `renditions/`) last written before `before` (ms since the epoch): the
   * candidates of the store's janitor. A staged write this store has open is never listed, however old.
   */
  listOlderThan(prefix: string, before: number): AsyncIterable<string>;
  /**
   * Removes `key` if it was still last written before `before` and `unreferenced()` still says so once the key is
   * out of reach; otherwise puts it back. An upload that meets an existing object at its key refreshes it (`move`),
   * so an object an upload is about to record is never removed. True when it was removed.
   */
  collect(key: string, before: number, unreferenced: () => Promise<boolean>): Promise<boolean>;
}

export interface FsBlobStore extends BlobStoreBase {
  readonly kind: "fs";
  readonly dir: string;
}

export interface PresignedPost {
  url: string;
  /** Form fields to send before the `file` field, `Policy` (base64 JSON) among them. */
  fields: Record<string, string>;
}

export interface S3BlobStore extends BlobStoreBase {
  readonly kind: "s3";
  readonly bucket: string;
  /** `move` without removing the source: a completion keeps its staged object until its row is recorded. */
  copy(from: string, to: string, options?: { ifVersion?: string }): Promise<{ created: boolean }>;
  /**
   * A presigned GET (or HEAD) valid for `expiresIn` seconds from `signingDate`. S3's answer to it carries
   * `contentType`, and `Cache-Control: private` with `Expires: <cacheUntil>` when given.
   */
  presignRead(
    key: string,
    options: { expiresIn: number; method?: "GET" | "HEAD"; contentType?: string; cacheUntil?: Date; signingDate?: Date },
  ): Promise<string>;
  /** A browser-style presigned POST that only accepts exactly `size` bytes of exactly `contentType` at `key`. */
  presignPost(key: string, options: { contentType: string; size: number; expiresIn: number }): Promise<PresignedPost>;
}

export type BlobStore = FsBlobStore | S3BlobStore;

/** A staged write that settles once: committed by moving its staging key to the final key, or discarded. */
export const settleOnce = (
  store: Pick<BlobStoreBase, "move">,
  stagingKey: string,
  stream: Writable,
  discard: () => Promise<void>,
): StagedWrite => {
  let settled = false;
  return {
    stream,
    async commit(finalKey) {
      if (settled) throw new Error("staged write already settled");
      settled = true;
      return store.move(stagingKey, finalKey);
    },
    async discard() {
      settled = true;
      await discard();
    },
  };
};
