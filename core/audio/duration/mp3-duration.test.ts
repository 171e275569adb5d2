/** The MP3 walker against what ffmpeg decodes, where the LAME tag's encoder delay and padding decide the length. */
import { describe, expect, it } from "vitest";
import { encodedNoise } from "../../../test/support/audio-fixtures";
import { decodedBytesMs, measuredMs } from "../../../test/support/measured-duration";

const measure = (bytes: Buffer) => measuredMs(bytes, "audio/mpeg");
const decoded = decodedBytesMs;

describe("an MP3 with a LAME tag", () => {
  it.each([
    ["8 kHz at 8 kb/s (MPEG 2.5), where the delay and padding are 190 ms", ["-ar", "8000", "-ac", "1", "-b:a", "8k"]],
    ["16 kHz at 32 kb/s (MPEG 2)", ["-ar", "16000", "-ac", "1", "-b:a", "32k"]],
    ["44.1 kHz at 128 kb/s", ["-ar", "44100", "-b:a", "128k"]],
  ])("measures what players decode, its encoder delay and padding trimmed: %s", async (_, args) => {
    const { bytes } = await encodedNoise(`lame-gap-${args.join("")}`, "audio/mpeg", 7.3, ["-c:a", "libmp3lame", ...args, "-f", "mp3"]);
    expect(Math.abs((await measure(bytes)) - (await decoded(bytes)))).toBeLessThanOrEqual(2);
  });

  it("cut short, is the frames still there less the delay: the padding went with the end", async () => {
    const { bytes } = await encodedNoise("lame-gap-cut", "audio/mpeg", 7.3, ["-c:a", "libmp3lame", "-ar", "8000", "-ac", "1", "-b:a", "8k", "-f", "mp3"]);
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6));
    // ffmpeg trims the padding from the last frame the tag counted, which a cut file does not reach.
    // Within the one frame (72 ms at 8 kHz) a cut may leave partly there.
    expect(Math.abs((await measure(cut)) - (await decoded(cut)))).toBeLessThanOrEqual(72);
  });
});
