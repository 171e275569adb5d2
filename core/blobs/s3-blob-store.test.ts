import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Emulator, type S3Emulator } from "../../test/support/s3-emulator";
import { storedKeys } from "../../test/support/stored-keys";
import { blobStoreSuite } from "./blob-store.suite";
import { createS3BlobStore, createS3Client } from "./s3-blob-store";

let emulator: S3Emulator;
beforeAll(async () => {
  emulator = await startS3Emulator();
});
afterAll(async () => {
  await emulator.stop();
});

const emptyBucket = async () => {
  const store = createS3BlobStore({ bucket: emulator.bucket, client: emulator.client });
  for (const key of await storedKeys(emulator)) await store.delete(key);
  return store;
};

blobStoreSuite("S3 (s3rver)", async () => ({ store: await emptyBucket(), backing: emulator, close: async () => undefined }));

describe("S3 blob store", () => {
  it("probe throws when the bucket cannot be reached", async () => {
    const missing = createS3BlobStore({ bucket: "no-such-bucket", client: emulator.client });
    await expect(missing.probe()).rejects.toThrow();
    const closed = new S3Client({
      region: "us-east-1",
      endpoint: "http://127.0.0.1:9",
      forcePathStyle: true,
      credentials: { accessKeyId: "x", secretAccessKey: "x" },
      maxAttempts: 1,
    });
    await expect(createS3BlobStore({ bucket: emulator.bucket, client: closed }).probe()).rejects.toThrow();
  });

  it("an S3 that accepts the connection and never answers fails the call within its bounds, never holds it for good", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const store = createS3BlobStore({ bucket: "b", client: createS3Client(`http://127.0.0.1:${port}`, { connect: 200, idle: 300 }) });
      const started = Date.now();
      await expect(store.stat("blobs/app/x")).rejects.toThrow();
      // Three attempts of 300 ms, with the SDK's backoff between them.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("bytes swapped in after they were read never reach their content address: the copy is conditional on the version read", async () => {
    // s3rver ignores CopySourceIfMatch, so this checks the request S3 would enforce it on.
    const sent: { constructor: { name: string }; input: Record<string, unknown> }[] = [];
    const spy = {
      send: (command: (typeof sent)[number]) => {
        sent.push(command);
        return emulator.client.send(command as never);
      },
    } as unknown as S3Client;
    await (await emptyBucket()).writeAtomic("staging/app/u", Readable.from([Buffer.from("hashed bytes")]));
    const store = createS3BlobStore({ bucket: emulator.bucket, client: spy });
    const read = await store.read("staging/app/u");
    read!.stream.resume();
    await store.move("staging/app/u", "blobs/app/x", { ifVersion: read!.version });
    const copy = sent.find((command) => command.constructor.name === "CopyObjectCommand");
    expect(read!.version).toMatch(/^".+"$/);
    expect(copy?.input).toMatchObject({ Key: "blobs/app/x", CopySourceIfMatch: read!.version });
  });

  it("a staged object is stored under staging/ with its content type until committed", async () => {
    const store = await emptyBucket();
    const staged = await store.stage({ contentType: "audio/ogg" });
    staged.stream.end(Buffer.from("ogg bytes"));
    await new Promise((resolve) => staged.stream.on("finish", resolve));
    const [key] = await storedKeys(emulator, "staging/");
    expect(key).toMatch(/^staging\/ingest-/);
    expect((await store.read(key!))?.contentType).toBe("audio/ogg");
    await staged.commit("blobs/app/x");
    expect(await storedKeys(emulator)).toEqual(["blobs/app/x"]);
    expect((await store.read("blobs/app/x"))?.contentType).toBe("audio/ogg");
  });
});
