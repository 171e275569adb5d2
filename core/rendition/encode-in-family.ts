/**
 * Re-encodes audio bytes from elsewhere (an external denoiser's mp3) into an upload's family and stores the result at
 * its content address. Bytes already in that family are stored as they are. Runs ffmpeg wherever it is called from.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { acceptedAudioTypes, type AcceptedMimeType } from "../records/accepted-types";
import type { BlobStore } from "../blobs/blob-store";
import { storeContentAddressed } from "./blob-files";
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
  appId: string,
  mimeType: AcceptedMimeType,
): Promise<EncodedVariant> {
  return withWorkspace(async (dir) => {
    const input = join(dir, "input");
    await writeFile(input, bytes);
    const keep = acceptedAudioTypes[mimeType] === bytesFamily;
    const encoding = familyEncodings[mimeType];
    const output = keep ? input : join(dir, `output.${encoding.ext}`);
    // One run: the family encode (when needed) and the analysis PCM that gives the duration.
    const args = ["-i", input, ...(keep ? [] : [...audioOnly, ...encoding.args, output]), ...analysisPcmOutput];
    const pcm = pcmFromBytes(await runFfmpeg(options.ffmpeg, args, { collectStdout: true, signal: options.signal }));
    const stored = await storeContentAddressed(options.store, appId, output, mimeType);
    return { ...stored, durationMs: pcmDurationMs(pcm) };
  });
}
