/**
 * A staged 25 MiB upload through each of the file store's writers, as uploads arrive (64 KiB reads), to its durable
 * end: direct I/O from aligned slots, and the page cache with background flushes. Besides the time per write, the
 * kernel time (system CPU) each spends per 25 MiB is printed: the copy into the page cache is the difference.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, bench, describe } from "vitest";
import { maxUploadBytes } from "../records/accepted-types";
import { createFsBlobStore } from "./fs-blob-store";
import { supportsDirectIo } from "./fs-direct-writer";

const bytes = Buffer.alloc(maxUploadBytes, 7);
const chunks = () => Readable.from(Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536)));
const dir = mkdtempSync(join(tmpdir(), "fs-writers-bench-"));
const kernelMs: Record<string, number[]> = {};

const writeThrough = (name: string, directIo: boolean) => {
  const store = createFsBlobStore(join(dir, name), { directIo });
  return async () => {
    const before = process.cpuUsage();
    const staged = await store.stage();
    await pipeline(chunks(), staged.stream);
    await staged.discard();
    (kernelMs[name] ??= []).push(process.cpuUsage(before).system / 1000);
  };
};

const direct = await supportsDirectIo(tmpdir());

afterAll(() => {
  if (!direct) console.log(`${tmpdir()} does not take direct I/O: only the page-cache writer ran`);
  for (const [name, samples] of Object.entries(kernelMs)) {
    const sorted = samples.sort((a, b) => a - b);
    console.log(`${name}: kernel time per ${maxUploadBytes / 1024 / 1024} MiB upload, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms of ${sorted.length}`);
  }
  rmSync(dir, { recursive: true, force: true });
});

describe(`a staged ${maxUploadBytes / 1024 / 1024} MiB upload, written until durable`, () => {
  if (direct) bench("direct I/O (O_DIRECT, aligned slots)", writeThrough("direct", true), { iterations: 20 });
  bench("page cache (writev, background datasync)", writeThrough("page-cache", false), { iterations: 20 });
});
