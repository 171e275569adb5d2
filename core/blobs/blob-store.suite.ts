/** The behaviour every BlobStore adapter shares; fs-blob-store.test.ts and s3-blob-store.test.ts both run it. */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type BlobBacking, storedKeys } from "../../test/support/stored-keys";
import type { BlobStore } from "./blob-store";

export interface OpenedStore {
  store: BlobStore;
  /** Where its bytes live, for the suite to see what is stored without asking the store. */
  backing: BlobBacking;
  close(): Promise<void>;
}

const bytes = (n: number, seed = 1) => {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) % 251;
  return out;
};

const collect = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
};

/** Emits `good` bytes, then fails: a client that disconnects mid-upload. */
const failingSource = (good: Buffer) =>
  new Readable({
    read() {
      if (good.length > 0) {
        this.push(good);
        good = Buffer.alloc(0);
      } else this.destroy(new Error("client went away"));
    },
  });

const cidA = "bafkreibnoelefnzgwbcacyt4vh52ymxvzbjq7mmqhtcnwarfq4lzegsiqe";

export function blobStoreSuite(name: string, open: () => Promise<OpenedStore>): void {
  describe(`${name} blob store (shared adapter suite)`, () => {
    let opened: OpenedStore | undefined;
    let store: BlobStore;
    const stored = (prefix: string) => storedKeys(opened!.backing, prefix);

    beforeEach(async () => {
      await opened?.close();
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.close();
    });

    it("a missing key stats and reads as null, and deleting it is no error", async () => {
      expect(await store.stat("blobs/app/nothing")).toBeNull();
      expect(await store.read("blobs/app/nothing")).toBeNull();
      await store.delete("blobs/app/nothing");
    });

    it("writes atomically and reads back the same bytes, whole or by inclusive range", async () => {
      const data = bytes(10_000);
      await store.writeAtomic(`blobs/app/${cidA}`, Readable.from([data]), { contentType: "audio/wav" });
      expect(await store.stat(`blobs/app/${cidA}`)).toEqual({ size: 10_000 });
      const whole = await store.read(`blobs/app/${cidA}`);
      expect(whole?.size).toBe(10_000);
      expect((await collect(whole!.stream)).equals(data)).toBe(true);
      const part = await store.read(`blobs/app/${cidA}`, { start: 100, end: 199 });
      expect(part?.size).toBe(10_000);
      expect((await collect(part!.stream)).equals(data.subarray(100, 200))).toBe(true);
    });

    it("a failing source stream leaves no final object and no temp debris", async () => {
      // Over one S3 part (5 MiB), so the S3 adapter has a multipart upload to abort. (s3rver cannot abort one,
      // so its error replaces the source's there; either way the write fails.)
      await expect(store.writeAtomic("blobs/app/broken", failingSource(bytes(6 * 1024 * 1024)))).rejects.toThrow();
      expect(await store.stat("blobs/app/broken")).toBeNull();
      expect(await stored("")).toEqual([]);
    });

    it("no reader ever sees a staged blob before its commit, and then sees all of it", async () => {
      const data = bytes(300_000, 7);
      const staged = await store.stage({ contentType: "audio/wav" });
      const key = `blobs/app/${cidA}`;
      await pipeline(Readable.from([data.subarray(0, 1000)]), staged.stream, { end: false });
      expect(await store.stat(key)).toBeNull();
      await pipeline(Readable.from([data.subarray(1000)]), staged.stream);
      expect(await store.stat(key)).toBeNull();
      await staged.commit(key);
      expect(await store.stat(key)).toEqual({ size: data.length });
      expect((await collect((await store.read(key))!.stream)).equals(data)).toBe(true);
      expect(await stored("staging/")).toEqual([]);
    });

    it("identical bytes committed twice to their content address are stored once", async () => {
      const data = bytes(5000, 3);
      for (let i = 0; i < 2; i++) {
        const staged = await store.stage();
        await pipeline(Readable.from([data]), staged.stream);
        await staged.commit(`blobs/app/${cidA}`);
      }
      expect(await stored("")).toEqual([`blobs/app/${cidA}`]);
    });

    it("a discarded staged write leaves nothing behind, whether it failed or finished", async () => {
      const failed = await store.stage();
      await expect(pipeline(failingSource(bytes(2000)), failed.stream)).rejects.toThrow("client went away");
      await failed.discard();
      const finished = await store.stage();
      await pipeline(Readable.from([bytes(2000)]), finished.stream);
      await finished.discard();
      const untouched = await store.stage();
      await untouched.discard();
      expect(await stored("")).toEqual([]);
    });

    it("move renames; onto an existing key it only removes the source", async () => {
      await store.writeAtomic("staging/app/one", Readable.from([bytes(10, 1)]));
      await store.move("staging/app/one", "blobs/app/x");
      expect(await stored("")).toEqual(["blobs/app/x"]);
      await store.writeAtomic("staging/app/two", Readable.from([bytes(10, 1)]));
      await store.move("staging/app/two", "blobs/app/x");
      expect(await stored("")).toEqual(["blobs/app/x"]);
    });

    it("probe reports empty until an original blob exists (renditions and staging do not count)", async () => {
      expect(await store.probe()).toBe("empty");
      await store.writeAtomic("renditions/app/x.mp3", Readable.from([bytes(3)]));
      await store.writeAtomic("staging/app/u", Readable.from([bytes(3)]));
      expect(await store.probe()).toBe("empty");
      await store.writeAtomic(`blobs/app/${cidA}`, Readable.from([bytes(3)]));
      expect(await store.probe()).toBe("present");
    });

    it("refuses keys that could leave the store", async () => {
      for (const key of ["../x", "blobs/../x", "/etc/passwd", "blobs//x", "blobs/./x", "blobs/a b", ""]) {
        await expect(store.stat(key), key).rejects.toThrow("unsafe blob key");
        await expect(store.writeAtomic(key, Readable.from([bytes(1)])), key).rejects.toThrow("unsafe blob key");
      }
    });
  });
}
