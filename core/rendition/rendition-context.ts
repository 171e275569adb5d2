/** What every rendition operation works with, and the request and answer shapes of docs/decisions.md#rendition-service. */
import type { AcceptedMimeType } from "../records/accepted-types";
import { blobKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import type { StoredFile } from "./blob-files";
import type { LoudnessCache } from "./loudness-cache";
import type { PcmCache } from "./pcm-cache";
import type { RecentEntries } from "./recent-entries";
import type { FfmpegRun, FfmpegTiming } from "./run-ffmpeg";

export interface RenditionContext {
  store: BlobStore;
  /** The ffmpeg binary (resolveFfmpegPath). */
  ffmpeg: string;
  pcm: PcmCache;
  loudness: LoudnessCache;
  /** mp3 renditions this process stored (normalize makes its output's), by rendition key: their CID and size unread. */
  renditions: RecentEntries<StoredFile>;
  signal?: AbortSignal;
  /** The request's ffmpeg runs, for its log line. */
  timings?: FfmpegTiming[];
}

/** The options every ffmpeg run of an operation takes from its context: its abort signal, and its timing under `step`. */
export const ffmpegRun = (context: Pick<RenditionContext, "signal" | "timings">, step: string): FfmpegRun => ({
  signal: context.signal,
  timings: context.timings,
  step,
});

/** A request body: the blob at `blobs/<appId>/<cid>`, declared as `mimeType`. */
export interface RenditionSource {
  appId: string;
  cid: string;
  mimeType: AcceptedMimeType;
  /** Trim: measure the output's loudness, for the normalize that follows (loudness-cache.ts); make no waveform. */
  measureOutput?: boolean;
}

/** The answer of trim, denoise and render: the output blob. */
export interface RenditionOutput {
  cid: string;
  mimeType: string;
  size: number;
  durationMs: number;
}

export const sourceKey = (source: Pick<RenditionSource, "appId" | "cid">): string => blobKey(source.appId, source.cid);
