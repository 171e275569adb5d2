import { mkdtemp, open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createFsBlobStore } from "./fs-blob-store";
import { supportsDirectIo } from "./fs-direct-writer";

// Every flush the store asks of the disk, in order, next to the moments the test observes.
let events: string[];
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "fs-blobs-durable-"));
  const probe = await open(join(dir, "probe"), "w");
  const fileHandle = Object.getPrototypeOf(probe) as { sync(): Promise<void>; datasync(): Promise<void> };
  await probe.close();
  const { sync, datasync } = fileHandle;
  events = [];
  vi.spyOn(fileHandle, "sync").mockImplementation(function (this: unknown) {
    events.push("sync");
    return sync.call(this);
  });
  vi.spyOn(fileHandle, "datasync").mockImplementation(function (this: unknown) {
    events.push("datasync");
    return datasync.call(this);
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const chunksOf = (bytes: Buffer, size: number) =>
  Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));

describe("filesystem blob store durability", () => {
  it("through the page cache, a staged write finishes only once its bytes are fsynced, and a large one is flushed in the background while it arrives", async () => {
    const store = createFsBlobStore(dir, { directIo: false });
    const bytes = Buffer.alloc(10 * 1024 * 1024, 7);
    const staged = await store.stage();
    await pipeline(chunksOf(bytes, 64 * 1024), staged.stream);
    events.push("finished");
    // Background flushes during the write (one at a time, so how many depends on the disk), so the last fsync only
    // has the tail left to write out.
    expect(events.filter((event) => event === "datasync").length).toBeGreaterThanOrEqual(1);
    expect(events.at(-2)).toBe("sync");
    await staged.commit("blobs/app/big");
    expect((await readFile(join(dir, "blobs", "app", "big"))).equals(bytes)).toBe(true);
  });

  it("with direct I/O (where the filesystem takes it), a staged write finishes only once the file is fsynced", async () => {
    const store = createFsBlobStore(dir);
    const bytes = Buffer.alloc(10 * 1024 * 1024 + 123, 7);
    const staged = await store.stage();
    await pipeline(chunksOf(bytes, 64 * 1024), staged.stream);
    events.push("finished");
    // Each direct write returns once the device has its bytes: no background flushes, and the closing fsync makes
    // the metadata (the allocation, the length cut back from the padded last block) and the device cache durable.
    if (await supportsDirectIo(dir)) expect(events).toEqual(["sync", "finished"]);
    else expect(events.at(-2)).toBe("sync");
    await staged.commit("blobs/app/big");
    expect((await readFile(join(dir, "blobs", "app", "big"))).equals(bytes)).toBe(true);
  });

  it("commit fsyncs the directory that now names the blob before it resolves", async () => {
    const store = createFsBlobStore(dir);
    const staged = await store.stage();
    await pipeline(Readable.from([Buffer.from("hello")]), staged.stream);
    events.length = 0;
    await staged.commit("blobs/app/small");
    events.push("committed");
    expect(events).toEqual(["sync", "committed"]);
  });
});
