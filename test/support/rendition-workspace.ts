/** A rendition context over a file blob store in a temporary directory, for the tests of one file. */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll } from "vitest";
import { blobKey } from "../../core/blobs/blob-key";
import { createFsBlobStore } from "../../core/blobs/fs-blob-store";
import { rawCid } from "../../core/blobs/raw-cid";
import type { AcceptedMimeType } from "../../core/records/accepted-types";
import { createLoudnessCache } from "../../core/rendition/loudness-cache";
import { createPcmCache } from "../../core/rendition/pcm-cache";
import { createRecentEntries } from "../../core/rendition/recent-entries";
import type { RenditionContext, RenditionSource } from "../../core/rendition/rendition-context";
import { ffmpeg } from "./rendition-fixtures";

export interface RenditionWorkspace {
  /** The temporary directory: the blob store lives in its `blobs/`, and a test may put its own files beside it. */
  dir: string;
  context: RenditionContext;
}

/** Made before the file's tests and removed after them. */
export function renditionWorkspace(prefix: string): RenditionWorkspace {
  const workspace = {} as RenditionWorkspace;
  beforeAll(async () => {
    workspace.dir = await mkdtemp(join(tmpdir(), prefix));
    const store = createFsBlobStore(join(workspace.dir, "blobs"));
    workspace.context = { store, ffmpeg, pcm: createPcmCache(), loudness: createLoudnessCache(), renditions: createRecentEntries() };
  });
  afterAll(() => rm(workspace.dir, { recursive: true, force: true }));
  return workspace;
}

/** Stores `bytes` as the tenant's blob and runs `operation` on it: its answer, and the bytes it stored. */
export async function runOnStored<Answer extends { cid: string }>(
  { dir, context }: RenditionWorkspace,
  operation: (context: RenditionContext, source: RenditionSource) => Promise<Answer>,
  bytes: Buffer,
  mimeType: AcceptedMimeType,
  appId = "demo",
) {
  const cid = rawCid(bytes);
  await context.store.writeAtomic(blobKey(appId, cid), Readable.from([bytes]));
  const answer = await operation(context, { appId, cid, mimeType });
  return { cid, answer, stored: await readFile(join(dir, "blobs", "blobs", appId, answer.cid)) };
}
