/** A duration as the service measures it from uploaded bytes, and as ffmpeg decodes the same bytes. */
import { randomUUID } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { scanAudio } from "../../core/audio/scan-audio";
import { decodedSampleMs } from "./audio-fixtures";

/** The bytes as a network delivers them: uneven chunks, so headers, pages and laces straddle chunk boundaries. */
export const chunkedStream = (bytes: Buffer, sizes = [3, 1500, 17, 65_536]): Readable => {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) chunks.push(bytes.subarray(at, (at += sizes[i % sizes.length]!)));
  return Readable.from(chunks);
};

/** The durationMs an upload of the bytes, declared as `mimeType`, is given. */
export const measuredMs = async (bytes: Buffer, mimeType: string): Promise<number> =>
  (await scanAudio({ source: chunkedStream(bytes), mimeType })).durationMs;

/** How long ffmpeg decodes the bytes to, in ms: its samples, counted. */
export const decodedBytesMs = async (bytes: Buffer): Promise<number> => {
  const path = join(tmpdir(), `decoded-${randomUUID()}`);
  await writeFile(path, bytes);
  try {
    return await decodedSampleMs(path);
  } finally {
    await rm(path, { force: true });
  }
};
