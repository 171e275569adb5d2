/**
 * Re-encodes audio bytes from elsewhere (an external denoiser's mp3) like the upload they came from, in its family and
 * with its channel count (the loudness target depends on it; a service may answer mono for stereo), and stores the
 * result at its content address. Bytes already like that are stored as they are. Runs ffmpeg wherever it is called.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { acceptedAudioTypes, type AcceptedMimeType } from "../records/accepted-types";
import type { BlobStore } from "../blobs/blob-store";
import { storeContentAddressed } from "./blob-files";
import { channelCount } from "./channel-count";
import { ffmpegInput } from "./ffmpeg-input";
import { audioOnly, encoderLayoutFilter, familyEncodings } from "./family-encoding";
import { analysisPcmOutput, pcmDurationMs, pcmFromBytes } from "./pcm";
import { FfmpegError, runFfmpeg } from "./run-ffmpeg";
import { withWorkspace } from "./temp-workspace";

export interface EncodedVariant {
  cid: string;
  size: number;
  durationMs: number;
}

/** The bytes given are not audio ffmpeg can decode: their first decode failed, before anything was encoded. */
export class UndecodableBytesError extends FfmpegError {}

const undecodable = (error: unknown) => {
  throw error instanceof FfmpegError ? new UndecodableBytesError(error.message, error.stderr) : error;
};

export function encodeInFamily(
  options: { store: BlobStore; ffmpeg: string; signal?: AbortSignal },
  bytes: Uint8Array,
  bytesFamily: "mp3",
  upload: { appId: string; mimeType: AcceptedMimeType; bytes: Uint8Array },
): Promise<EncodedVariant> {
  const { appId, mimeType } = upload;
  const { ffmpeg, signal } = options;
  return withWorkspace(async (dir) => {
    const input = join(dir, "input");
    const original = join(dir, "upload");
    await Promise.all([writeFile(input, bytes), writeFile(original, upload.bytes)]);
    const family = acceptedAudioTypes[mimeType];
    const [channels, answered] = await Promise.all([channelCount(ffmpeg, original, family, signal), channelCount(ffmpeg, input, bytesFamily, signal).catch(undecodable)]);
    const keep = family === bytesFamily && answered === channels;
    const encoding = familyEncodings[mimeType];
    const output = keep ? input : join(dir, `output.${encoding.ext}`);
    if (!keep) {
      // libopus takes only its own layout of each count: the filter converts to it (-ac alone would pick ffmpeg's default).
      const layout = encoderLayoutFilter(mimeType, channels);
      await runFfmpeg(ffmpeg, [...ffmpegInput(input, bytesFamily), ...audioOnly, ...(layout ? ["-af", layout] : ["-ac", String(channels)]), ...encoding.args, output], { signal });
    }
    // The duration of what is stored, decoded: an encoder's padding (AAC fills its last frame) is part of it.
    // What is stored is of the upload's family either way (kept only when the families match).
    const decoded = runFfmpeg(ffmpeg, [...ffmpegInput(output, family), ...analysisPcmOutput], { collectStdout: true, signal });
    const pcm = pcmFromBytes(await (keep ? decoded.catch(undecodable) : decoded));
    const stored = await storeContentAddressed(options.store, appId, output, mimeType);
    return { ...stored, durationMs: pcmDurationMs(pcm) };
  });
}
