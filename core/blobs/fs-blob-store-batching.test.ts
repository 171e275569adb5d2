import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createFsBlobStore } from "./fs-blob-store";

let dir: string;

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

describe("filesystem blob store writes", () => {
  it("an upload arriving in 64 KiB socket reads goes to the file in writes of 1 MiB, not one per read", async () => {
    dir = await mkdtemp(join(tmpdir(), "fs-blobs-batch-"));
    const probe = await open(join(dir, "probe"), "w");
    const fileHandle = Object.getPrototypeOf(probe) as Record<"write" | "writev", (...args: unknown[]) => unknown>;
    await probe.close();
    const store = createFsBlobStore(dir);
    // The first staged write probes the filesystem for direct I/O with a write of its own: not counted.
    await (await store.stage()).discard();
    const writes = [vi.spyOn(fileHandle, "write"), vi.spyOn(fileHandle, "writev")];
    const bytes = Buffer.alloc(10 * 1024 * 1024 + 5);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    const chunks = Array.from({ length: Math.ceil(bytes.length / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
    const staged = await store.stage();
    await pipeline(Readable.from(chunks), staged.stream);
    await staged.commit("blobs/app/batched");
    expect(writes.reduce((calls, spy) => calls + spy.mock.calls.length, 0)).toBeLessThanOrEqual(11);
    expect((await readFile(join(dir, "blobs", "app", "batched"))).equals(bytes)).toBe(true);
  });
});
