import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import type { BlobStore } from "../../core/blobs/blob-store";

/** Where a blob store's bytes live: the file store's directory, or a bucket read through the emulator's own client. */
export type BlobBacking = { dir: string } | { client: S3Client; bucket: string };

/**
 * Every key stored under `prefix`, sorted, read from the store's backing as an operator would look (the directory
 * tree; the bucket's listing), not through the store: the service never lists, so the stores offer no listing.
 * An S3 store's keys are read through its emulator: pass the `S3Emulator`.
 */
export async function storedKeys(backing: BlobBacking | BlobStore, prefix = ""): Promise<string[]> {
  if ("dir" in backing) return (await filesUnder(backing.dir, "")).filter((key) => key.startsWith(prefix)).sort();
  if (!("client" in backing)) throw new Error("an S3 store's keys are read through its emulator: pass the S3Emulator");
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await backing.client.send(new ListObjectsV2Command({ Bucket: backing.bucket, Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

const filesUnder = async (dir: string, key: string): Promise<string[]> => {
  let entries;
  try {
    entries = await readdir(join(dir, ...(key ? key.split("/") : [])), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return []; // nothing written yet
    throw error;
  }
  const keys: string[] = [];
  for (const entry of entries) {
    const child = key ? `${key}/${entry.name}` : entry.name;
    if (entry.isDirectory()) keys.push(...(await filesUnder(dir, child)));
    else if (entry.isFile()) keys.push(child);
  }
  return keys;
};
