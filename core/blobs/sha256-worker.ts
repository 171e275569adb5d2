/**
 * SHA-256 of uploads computed off the main thread: one long-lived worker owns a hash per upload, fed the upload's
 * bytes in ~1 MiB batches, and answers the digest at the end. The main thread then only copies the bytes once
 * (into a buffer it then transfers) instead of hashing them, which leaves it free for the socket, the multipart parser and the disk.
 * The worker hands each batch's buffer back once hashed and the next batch is copied into it: memory already
 * mapped, where a fresh 1 MiB buffer per batch cost the main thread 5-13 ms of page faults per 25 MiB upload.
 */
import { Worker } from "node:worker_threads";
import { DomainError } from "../domain-error";

// Plain JavaScript evaluated in the worker: no loader or bundler has to know about a second entry file.
const workerSource = `
const { parentPort } = require("node:worker_threads");
const { createHash } = require("node:crypto");
const hashes = new Map();
parentPort.on("message", (m) => {
  if (m.op === "update") {
    let hash = hashes.get(m.id);
    if (!hash) hashes.set(m.id, (hash = createHash("sha256")));
    for (const chunk of m.chunks) hash.update(chunk);
    const spares = m.chunks.map((chunk) => chunk.buffer);
    parentPort.postMessage({ spares }, spares);
  } else if (m.op === "digest") {
    const hash = hashes.get(m.id) ?? createHash("sha256");
    hashes.delete(m.id);
    const digest = hash.digest();
    parentPort.postMessage({ id: m.id, digest }, [digest.buffer]);
  } else if (m.op === "release") {
    hashes.delete(m.id);
  } else if (m.op === "count") {
    parentPort.postMessage({ id: m.id, count: hashes.size });
  } else if (m.op === "crash") {
    throw new Error("crash requested by a test");
  }
});
`;

export interface WorkerHash {
  /** Queues bytes for the hash; they are copied, so the caller may keep using (and writing out) its buffers. */
  update(chunks: readonly Uint8Array[]): void;
  /** The SHA-256 of everything queued; call once. Rejects with INTERNAL when the worker died meanwhile. */
  digest(): Promise<Uint8Array>;
  /** Drops the worker's state for an upload that will not finish; harmless after `digest`. */
  release(): void;
}

type Pending = { resolve: (value: { digest?: Uint8Array; count?: number }) => void; reject: (error: Error) => void };

/** The size of a batch buffer; a larger batch gets a buffer of its own, not kept. */
const spareBytes = 2 * 1024 * 1024;
/** Buffers the worker gave back, at most this many kept (two uploads' batches in flight, with room). */
const maxSpares = 8;
const spares: ArrayBuffer[] = [];

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();
// Uploads started on the current worker: its death fails each of them, even those not yet waiting for a digest.
const live = new Map<number, (error: Error) => void>();

const workerFault = (why: string) => new DomainError("INTERNAL", `upload hashing failed: ${why}`);

function currentWorker(): Worker {
  if (worker) return worker;
  // execArgv: [] keeps the parent's loaders (`--import tsx`) out: they would make the source an ES module and
  // slow the worker's start for nothing.
  const started = new Worker(workerSource, { eval: true, execArgv: [] });
  // The worker never keeps the process alive: `npm start` exits when the server closes.
  started.unref();
  const die = (why: string) => {
    if (worker !== started) return;
    // The next upload starts a fresh worker; every upload that had state in this one fails.
    worker = undefined;
    const error = workerFault(why);
    for (const fail of live.values()) fail(error);
    live.clear();
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  started.on("message", (message: { id: number; digest?: Uint8Array; count?: number; spares?: ArrayBuffer[] }) => {
    if (message.spares) {
      for (const spare of message.spares) if (spare.byteLength === spareBytes && spares.length < maxSpares) spares.push(spare);
      return;
    }
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    waiting?.resolve(message);
  });
  started.on("error", (error) => die(error.message));
  started.on("exit", (code) => die(`worker exited with code ${code}`));
  worker = started;
  return started;
}

const ask = (op: string, id: number) =>
  new Promise<{ digest?: Uint8Array; count?: number }>((resolve, reject) => {
    const target = currentWorker();
    // Held while an answer is awaited, so a digest is never lost to the process exiting; unref'd again once idle.
    if (pending.size === 0) target.ref();
    const settle = () => {
      if (pending.size === 0) target.unref();
    };
    pending.set(id, {
      resolve: (value) => (resolve(value), settle()),
      reject: (error) => (reject(error), settle()),
    });
    target.postMessage({ op, id });
  });

export function createWorkerHash(): WorkerHash {
  const id = nextId++;
  const target = currentWorker();
  let failed: Error | undefined;
  let done = false;
  live.set(id, (error) => (failed = error));
  return {
    update(chunks) {
      if (failed || done) return;
      // One copy into a buffer of our own, which is then moved, not cloned: the caller's chunks may still be on
      // their way to disk and must stay untouched, and a clone would copy each chunk's whole backing buffer.
      let size = 0;
      for (const chunk of chunks) size += chunk.length;
      const spare = size <= spareBytes ? spares.pop() : undefined;
      const copy = spare ? Buffer.from(spare, 0, size) : Buffer.allocUnsafeSlow(size <= spareBytes ? spareBytes : size).subarray(0, size);
      let at = 0;
      for (const chunk of chunks) {
        copy.set(chunk, at);
        at += chunk.length;
      }
      target.postMessage({ op: "update", id, chunks: [copy] }, [copy.buffer]);
    },
    async digest() {
      if (done) throw new Error("digest() called twice");
      done = true;
      live.delete(id);
      if (failed) throw failed;
      // A worker restarted since this upload began never saw its bytes.
      if (worker !== target) throw workerFault("worker restarted during the upload");
      const { digest } = await ask("digest", id);
      return digest!;
    },
    release() {
      if (done) return;
      done = true;
      live.delete(id);
      if (!failed && worker === target) target.postMessage({ op: "release", id });
    },
  };
}

/** For tests: how many uploads the worker holds a hash for. */
export async function workerHashCount(): Promise<number> {
  const { count } = await ask("count", nextId++);
  return count!;
}

/** For tests: the batch buffers the worker has given back, waiting for the next batch. */
export const spareHashBuffers = (): readonly ArrayBuffer[] => spares;

/** For tests: makes the worker throw, as a crash would. */
export function crashHashWorker(): void {
  currentWorker().postMessage({ op: "crash", id: -1 });
}
