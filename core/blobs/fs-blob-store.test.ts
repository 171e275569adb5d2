import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { blobStoreSuite } from "./blob-store.suite";
import { freeDirectSlots } from "./fs-aligned-slots";
import { createFsBlobStore } from "./fs-blob-store";
import { supportsDirectIo } from "./fs-direct-writer";

const tempDir = () => mkdtemp(join(tmpdir(), "fs-blobs-"));

blobStoreSuite("filesystem", async () => {
  const dir = await tempDir();
  return { store: createFsBlobStore(dir), backing: { dir }, close: () => rm(dir, { recursive: true, force: true }) };
});

blobStoreSuite("filesystem through the page cache", async () => {
  const dir = await tempDir();
  return { store: createFsBlobStore(dir, { directIo: false }), backing: { dir }, close: () => rm(dir, { recursive: true, force: true }) };
});

/** `bytes` cut at a few arbitrary places, as sockets and parsers hand them over. */
const unevenChunks = (bytes: Buffer) => {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = [1, 4095, 65536, 7, 300_001, 4096][i % 6]!;
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
};

describe("filesystem blob store", () => {
  it("blobs live at <dir>/blobs/<appId>/<cid>, and a failed write leaves no temp file in the tree", async () => {
    const dir = await tempDir();
    const store = createFsBlobStore(dir);
    await store.writeAtomic("blobs/app/abc", Readable.from([Buffer.from("hello")]));
    const failing = new Readable({ read() { this.destroy(new Error("boom")); } });
    await expect(store.writeAtomic("blobs/app/def", failing)).rejects.toThrow("boom");
    expect(await readdir(join(dir, "blobs", "app"))).toEqual(["abc"]);
    expect(await readdir(join(dir, "staging"))).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it("probe reports empty for a directory not yet created and throws when the path is not a directory", async () => {
    const dir = await tempDir();
    expect(await createFsBlobStore(join(dir, "not-yet")).probe()).toBe("empty");
    await writeFile(join(dir, "file"), "x");
    await expect(createFsBlobStore(join(dir, "file")).probe()).rejects.toThrow();
    await rm(dir, { recursive: true, force: true });
  });

  it("stores exactly the bytes written at every length around the direct-I/O block and slot boundaries, in either mode", async () => {
    const dir = await tempDir();
    const mib = 1024 * 1024;
    for (const directIo of [true, false]) {
      const store = createFsBlobStore(dir, { directIo });
      for (const size of [0, 1, 4095, 4096, 4097, mib - 1, mib, mib + 1, 3 * mib + 4097]) {
        const bytes = Buffer.alloc(size);
        for (let i = 0; i < size; i++) bytes[i] = (i * 7 + size) % 251;
        const key = `blobs/app/${directIo ? "direct" : "cached"}-${size}`;
        await store.writeAtomic(key, Readable.from(unevenChunks(bytes)));
        const stored = await readFile(join(dir, ...key.split("/")));
        expect(stored.length, key).toBe(size);
        expect(stored.equals(bytes), key).toBe(true);
      }
    }
    expect(await readdir(join(dir, "staging"))).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  it("a direct write that fails or is discarded midway gives its aligned buffers back and leaves no file", async () => {
    const dir = await tempDir();
    const store = createFsBlobStore(dir);
    await (await store.stage()).discard();
    if (!(await supportsDirectIo(join(dir, "staging")))) return void (await rm(dir, { recursive: true, force: true }));
    const free = freeDirectSlots();
    const big = Buffer.alloc(5 * 1024 * 1024 + 3, 9);
    for (let round = 0; round < 3; round++) {
      const failing = Readable.from(
        (function* () {
          yield* unevenChunks(big);
          throw new Error("client went away");
        })(),
      );
      const staged = await store.stage();
      await expect(pipeline(failing, staged.stream)).rejects.toThrow("client went away");
      await staged.discard();
      const abandoned = await store.stage();
      abandoned.stream.write(big);
      await abandoned.discard();
    }
    // Buffers of a write in flight come back once the disk answers.
    await expect.poll(freeDirectSlots).toBe(free);
    expect(await readdir(join(dir, "staging"))).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });
});
