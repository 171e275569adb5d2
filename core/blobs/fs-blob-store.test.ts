import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { blobStoreSuite } from "./blob-store.suite";
import { createFsBlobStore } from "./fs-blob-store";

const tempDir = () => mkdtemp(join(tmpdir(), "fs-blobs-"));

blobStoreSuite("filesystem", async () => {
  const dir = await tempDir();
  return { store: createFsBlobStore(dir), backing: { dir }, close: () => rm(dir, { recursive: true, force: true }) };
});

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
});
