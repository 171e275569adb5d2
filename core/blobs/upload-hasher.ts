/**
 * The SHA-256 of an upload as it streams: small uploads are hashed on the main thread, large ones in the hash
 * worker. Measured on the Node host, the worker's round trip and copy cost more than hashing a 1 MiB upload
 * (CPU per upload up ~1.5 ms, throughput down ~10%), while at 25 MiB moving ~15 ms of hashing off the main thread pays.
 */
import { createHash } from "node:crypto";
import { createWorkerHash, type WorkerHash } from "./sha256-worker";

/** Bytes gathered before a batch is posted to the worker, as the filesystem store gathers its writes. */
const batchBytes = 1024 * 1024;

/** Uploads that end before this many bytes are hashed inline; nothing goes to the worker before then. */
const workerFromBytes = 2 * batchBytes;

export interface UploadHasher {
  update(chunk: Buffer): void;
  /** The SHA-256 of every chunk; call once, after the last `update`. */
  digest(): Promise<Uint8Array>;
  /** Releases the worker's state of an upload that will not finish; harmless after `digest`. */
  release(): void;
}

export function createUploadHasher(): UploadHasher {
  let worker: WorkerHash | undefined;
  let batch: Buffer[] = [];
  let batched = 0;
  let total = 0;
  return {
    update(chunk) {
      batch.push(chunk);
      batched += chunk.length;
      total += chunk.length;
      if (batched < batchBytes || total < workerFromBytes) return;
      worker ??= createWorkerHash();
      worker.update(batch);
      batch = [];
      batched = 0;
    },
    async digest() {
      if (!worker) {
        const hash = createHash("sha256");
        for (const chunk of batch) hash.update(chunk);
        batch = [];
        return hash.digest();
      }
      if (batched > 0) worker.update(batch);
      batch = [];
      return worker.digest();
    },
    release() {
      batch = [];
      worker?.release();
    },
  };
}
