/** The MP3 walker against what ffmpeg decodes, where the LAME tag's encoder delay and padding decide the length. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodedSampleMs, encodedNoise } from "../../../test/support/audio-fixtures";
import { createMp3Meter } from "./mp3-duration";

const measure = (bytes: Buffer): number => {
  const meter = createMp3Meter();
  for (let at = 0; at < bytes.length; at += 4093) meter.push(bytes.subarray(at, at + 4093));
  return (meter.finish(bytes.length) as { durationMs: number }).durationMs;
};

const decoded = async (bytes: Buffer): Promise<number> => {
  const dir = await mkdtemp(join(tmpdir(), "mp3-duration-"));
  try {
    await writeFile(join(dir, "clip.mp3"), bytes);
    return await decodedSampleMs(join(dir, "clip.mp3"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

describe("an MP3 with a LAME tag", () => {
  it.each([
    ["8 kHz at 8 kb/s (MPEG 2.5), where the delay and padding are 190 ms", ["-ar", "8000", "-ac", "1", "-b:a", "8k"]],
    ["16 kHz at 32 kb/s (MPEG 2)", ["-ar", "16000", "-ac", "1", "-b:a", "32k"]],
    ["44.1 kHz at 128 kb/s", ["-ar", "44100", "-b:a", "128k"]],
  ])("measures what players decode, its encoder delay and padding trimmed: %s", async (_, args) => {
    const { bytes } = await encodedNoise(`lame-gap-${args.join("")}`, "audio/mpeg", 7.3, ["-c:a", "libmp3lame", ...args, "-f", "mp3"]);
    expect(Math.abs(measure(bytes) - (await decoded(bytes)))).toBeLessThanOrEqual(2);
  });

  it("cut short, is the frames still there less the delay: the padding went with the end", async () => {
    const { bytes } = await encodedNoise("lame-gap-cut", "audio/mpeg", 7.3, ["-c:a", "libmp3lame", "-ar", "8000", "-ac", "1", "-b:a", "8k", "-f", "mp3"]);
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6));
    // ffmpeg trims the padding from the last frame the tag counted, which a cut file does not reach.
    // Within the one frame (72 ms at 8 kHz) a cut may leave partly there.
    expect(Math.abs(measure(cut) - (await decoded(cut)))).toBeLessThanOrEqual(72);
  });
});
