/** An S3 emulator for tests: s3rver on loopback, an ephemeral port, a temp directory and one bucket. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";

export interface S3Emulator {
  client: S3Client;
  bucket: string;
  endpoint: string;
  /** Where s3rver keeps the bucket's files: an object's mtime is its LastModified. */
  directory: string;
  stop(): Promise<void>;
}

export async function startS3Emulator(bucket = "svc-test-blobs"): Promise<S3Emulator> {
  const directory = await mkdtemp(join(tmpdir(), "s3rver-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    // s3rver predates flexible checksums: aws-chunked bodies would be stored with their chunk framing.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return {
    client,
    bucket,
    endpoint,
    directory,
    async stop() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
