/** The rendition service's composition root on a Node host: the configured blob store (file or S3), ffmpeg, the HTTP server. */
import type { AddressInfo } from "node:net";
import type { BlobStore } from "../blobs/blob-store";
import type { Logger } from "../observability/logger";
import { resolveFfmpegPath } from "./ffmpeg-path";
import { createLoudnessCache } from "./loudness-cache";
import { createRecentEntries } from "./recent-entries";
import { createPcmCache } from "./pcm-cache";
import type { RenditionConfig } from "./rendition-config";
import { createRenditionHttpServer } from "./rendition-http-server";
import { createRenditionService } from "./rendition-service";
import { removeStaleWorkspaces } from "./temp-workspace";

export interface RunningRendition {
  url: string;
  close(): Promise<void>;
}

async function openBlobStore(config: RenditionConfig): Promise<BlobStore> {
  if (config.blobs.kind === "fs") {
    const { createFsBlobStore } = await import("../blobs/fs-blob-store");
    return createFsBlobStore(config.blobs.dir);
  }
  const { createS3BlobStore } = await import("../blobs/s3-blob-store");
  return createS3BlobStore({ bucket: config.blobs.bucket });
}

export async function startRendition(
  config: RenditionConfig,
  logger: Logger,
  options: { host?: string; port?: number; store?: BlobStore } = {},
): Promise<RunningRendition> {
  const store = options.store ?? (await openBlobStore(config));
  // Before it serves: a run killed mid-operation left its workspace (copies of its source and output) in the temp dir.
  await removeStaleWorkspaces(logger);
  const ffmpeg = resolveFfmpegPath(config.ffmpegPath);
  const service = createRenditionService({ context: { store, ffmpeg, pcm: createPcmCache(), loudness: createLoudnessCache(), renditions: createRecentEntries() }, token: config.token, logger });
  const server = createRenditionHttpServer(service);
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(options.port ?? config.port, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        // close() ends idle connections at once and a busy one after its answer (Connection: close); one still open
        // after the grace is closed, which stops its run as a caller leaving does.
        const grace = setTimeout(() => server.closeAllConnections(), shutdownGraceMs);
        server.close(() => (clearTimeout(grace), resolve()));
      }),
  };
}

/** How long a shutdown waits for answers in flight: the API host's default idle timeout (SVC_IDLE_TIMEOUT_MS). */
const shutdownGraceMs = 30_000;
