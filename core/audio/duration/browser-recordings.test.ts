import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { decodedSampleMs } from "../../../test/support/audio-fixtures";
import type { Recording } from "../../../test/fixtures/browser-recordings/make-recordings";
import { scanAudio } from "../scan-audio";

const dir = join(import.meta.dirname, "../../../test/fixtures/browser-recordings");
const recordings: Recording[] = JSON.parse(await readFile(join(dir, "recordings.json"), "utf8"));

/** As a network delivers them: uneven chunks, so element headers straddle chunk boundaries. */
const chunked = (bytes: Buffer, sizes = [3, 1500, 17, 65_536]) => {
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) chunks.push(bytes.subarray(at, (at += sizes[i % sizes.length]!)));
  return Readable.from(chunks);
};

describe("browser recordings", () => {
  it("the fixture set holds Chromium's WebM/Opus at several lengths, Firefox's Ogg/Opus and Safari's fragmented MP4/AAC", () => {
    const webm = recordings.filter((r) => r.mimeType === "audio/webm");
    expect(new Set(webm.map((r) => Math.round(r.decodedMs / 500))).size).toBeGreaterThanOrEqual(3);
    expect(recordings.some((r) => r.mimeType === "audio/ogg")).toBe(true);
    expect(recordings.some((r) => r.mimeType === "audio/mp4")).toBe(true);
  });

  it.each(recordings.map((r) => [r.file, r] as const))("%s: durationMs is within 50 ms of what ffmpeg decodes", async (file, recording) => {
    const path = join(dir, file);
    const decoded = await decodedSampleMs(path);
    expect(Math.abs(decoded - recording.decodedMs), "ffmpeg decodes the fixture as it did when it was made").toBeLessThanOrEqual(50);
    const { durationMs } = await scanAudio({ source: chunked(await readFile(path)), mimeType: recording.mimeType });
    expect(Math.abs(durationMs - decoded), `${durationMs} ms measured, ${decoded} ms decoded`).toBeLessThanOrEqual(50);
  });
});
