import { describe, expect, it } from "vitest";
import { encodedNoise } from "../../../test/support/audio-fixtures";
import { decodedBytesMs, measuredMs } from "../../../test/support/measured-duration";

const measure = (bytes: Buffer) => measuredMs(bytes, "audio/ogg");
const decoded = decodedBytesMs;

const opus = ["-c:a", "libopus", "-b:a", "64k", "-ar", "48000", "-f", "ogg"];
const vorbis = ["-c:a", "libvorbis", "-f", "ogg"];

describe("Ogg streams and links", () => {
  it("a chained Ogg plays its links one after another: their durations add up (Opus 3 s + 6 s)", async () => {
    const first = await encodedNoise("ogg-opus-3s", "audio/ogg", 3, opus);
    const second = await encodedNoise("ogg-opus-6s", "audio/ogg", 6, opus);
    const chained = Buffer.concat([first.bytes, second.bytes]);
    const ms = await measure(chained);
    // Within one 20 ms Opus frame of what ffmpeg decodes (it keeps the second link's pre-skip, 6.5 ms).
    expect(Math.abs(ms - (await decoded(chained))), `${ms} ms`).toBeLessThanOrEqual(20);
    expect(Math.abs(ms - 9000)).toBeLessThanOrEqual(20);
  });

  it("a chained Ogg whose links reuse one serial number (the same Vorbis file twice) adds its links up", async () => {
    const { bytes } = await encodedNoise("ogg-vorbis-6s", "audio/ogg", 6, vorbis);
    const chained = Buffer.concat([bytes, bytes]);
    const ms = await measure(chained);
    // Within one long Vorbis block (2048 samples at 44.1 kHz).
    expect(Math.abs(ms - (await decoded(chained))), `${ms} ms`).toBeLessThanOrEqual(47);
    expect(Math.abs(ms - 12_000)).toBeLessThanOrEqual(47);
  });

  it("streams side by side in one link play at once: the longest counts, not their sum", async () => {
    const { bytes } = await encodedNoise("ogg-opus-side-by-side", "audio/ogg", 6, ["-map", "0:a", "-map", "0:a", ...opus]);
    expect(bytes.toString("latin1").split("OpusHead").length - 1, "two Opus streams").toBe(2);
    const ms = await measure(bytes);
    expect(Math.abs(ms - (await decoded(bytes))), `${ms} ms`).toBeLessThanOrEqual(20);
    expect(Math.abs(ms - 6000)).toBeLessThanOrEqual(20);
  });
});
