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
import { audioOnly, familyEncodings } from "./family-encoding";
import { analysisPcmOutput, pcmDurationMs, pcmFromBytes } from "./pcm";
import { runFfmpeg } from "./run-ffmpeg";
import { withWorkspace } from "./temp-workspace";

export interface EncodedVariant {
  cid: string;
  size: number;
  durationMs: number;
}

export function encodeInFamily(
  options: { store: BlobStore; ffmpeg: string; signal?: AbortSignal },
  bytes: Uint8Array,
  bytesFamily: "mp3",
  upload: { appId: string; mimeType: AcceptedMimeType; bytes: Uint8Array },
): Promise<EncodedVariant> {
  const { appId, mimeType } = upload;
  return withWorkspace(async (dir) => {
    const input = join(dir, "input");
    const original = join(dir, "upload");
    await Promise.all([writeFile(input, bytes), writeFile(original, upload.bytes)]);
    const [channels, answered] = await Promise.all([channelCount(options.ffmpeg, original, options.signal), channelCount(options.ffmpeg, input, options.signal)]);
    const keep = acceptedAudioTypes[mimeType] === bytesFamily && answered === channels;
    const encoding = familyEncodings[mimeType];
    const output = keep ? input : join(dir, `output.${encoding.ext}`);
    // One run: the family encode (when needed) and the analysis PCM that gives the duration.
    const args = ["-i", input, ...(keep ? [] : [...audioOnly, "-ac", String(channels), ...encoding.args, output]), ...analysisPcmOutput];
    const pcm = pcmFromBytes(await runFfmpeg(options.ffmpeg, args, { collectStdout: true, signal: options.signal }));
    const stored = await storeContentAddressed(options.store, appId, output, mimeType);
    return { ...stored, durationMs: pcmDurationMs(pcm) };
  });
}
