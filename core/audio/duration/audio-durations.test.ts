import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { decodedMs, encodedNoise, pcmWavHeader } from "../../../test/support/audio-fixtures";
import { scanAudio } from "../scan-audio";

/** The bytes as a network delivers them: chunks of uneven sizes, so headers straddle chunk boundaries. */
const streamOf = (bytes: Buffer, sizes = [1, 7, 4096, 65_536, 333]) => {
  let at = 0;
  let i = 0;
  return new Readable({
    read() {
      if (at >= bytes.length) this.push(null);
      else this.push(bytes.subarray(at, (at += sizes[i++ % sizes.length]!)));
    },
  });
};

const measure = async (bytes: Buffer, mimeType: string) => (await scanAudio({ source: streamOf(bytes), mimeType })).durationMs;

/** Within 1% or 50 ms, whichever is larger. */
const expectClose = (actual: number, expected: number) => {
  expect(Math.abs(actual - expected), `${actual} ms against ${expected} ms`).toBeLessThanOrEqual(Math.max(50, expected * 0.01));
};

const seconds = 6;
const variants = [
  ["MP3 at 320 kb/s without a Xing header", "audio/mpeg", ["-c:a", "libmp3lame", "-b:a", "320k", "-write_xing", "0", "-f", "mp3"]],
  ["VBR MP3 without a Xing header", "audio/mpeg", ["-c:a", "libmp3lame", "-q:a", "0", "-write_xing", "0", "-f", "mp3"]],
  ["VBR MP3 with a Xing header", "audio/mpeg", ["-c:a", "libmp3lame", "-q:a", "4", "-f", "mp3"]],
  ["M4A with its moov at the end", "audio/m4a", ["-c:a", "aac", "-b:a", "128k", "-f", "ipod"]],
  ["M4A with its moov first", "audio/x-m4a", ["-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-f", "ipod"]],
  ["fragmented MP4 (as Safari records)", "audio/mp4", ["-c:a", "aac", "-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4"]],
  ["WebM Opus", "audio/webm", ["-c:a", "libopus", "-b:a", "96k", "-ar", "48000", "-f", "webm"]],
  ["WebM Vorbis", "audio/webm", ["-c:a", "libvorbis", "-f", "webm"]],
  ["Ogg Opus", "audio/ogg", ["-c:a", "libopus", "-b:a", "96k", "-ar", "48000", "-f", "ogg"]],
  ["Ogg Vorbis", "audio/ogg", ["-c:a", "libvorbis", "-f", "ogg"]],
  ["WAV", "audio/wav", ["-c:a", "pcm_s16le", "-f", "wav"]],
] as const;

const fixture = (name: string, mimeType: string, args: readonly string[]) =>
  encodedNoise(name.replace(/\W+/g, "-"), mimeType, seconds, [...args]);

describe("durations are measured from the bytes", () => {
  it.each(variants)("%s: within 1 percent (or 50 ms) of what ffmpeg decodes", async (name, mimeType, args) => {
    const { bytes } = await fixture(name, mimeType, args);
    const decoded = (await decodedMs(bytes))!;
    expectClose(decoded, seconds * 1000);
    expectClose(await measure(bytes, mimeType), decoded);
  });

  it.each(variants)("%s cut to 60 percent: only what the bytes still hold, or refused when ffmpeg decodes nothing", async (name, mimeType, args) => {
    const { bytes } = await fixture(name, mimeType, args);
    const cut = bytes.subarray(0, Math.floor(bytes.length * 0.6));
    const decoded = await decodedMs(cut);
    if (decoded === null || decoded === 0) {
      await expect(measure(cut, mimeType)).rejects.toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    } else {
      expectClose(await measure(cut, mimeType), decoded);
    }
  });
});

describe("a lying header never sets the duration", () => {
  const variant = (index: number) => fixture(variants[index]![0], variants[index]![1], variants[index]![2]);

  it("an 8 KB WAV whose header claims 20,000 s measures the 85 ms its bytes hold", async () => {
    const wav = Buffer.alloc(8192);
    pcmWavHeader(8192).copy(wav);
    wav.writeUInt32LE(20_000 * 96_000, 40);
    expect(await measure(wav, "audio/wav")).toBe(85);
  });

  it("a WAV claiming a 1 Hz sample rate (2^31 s of data) is refused, and a 1 byte/s ADPCM rate is bounded", async () => {
    const wav = Buffer.alloc(8192);
    pcmWavHeader(8192).copy(wav);
    wav.writeUInt32LE(0xffffffff, 40);
    wav.writeUInt32LE(1, 24);
    await expect(measure(wav, "audio/wav")).rejects.toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    const adpcm = Buffer.from(wav);
    adpcm.writeUInt16LE(0x11, 20);
    adpcm.writeUInt32LE(8000, 24);
    adpcm.writeUInt32LE(1, 28);
    expect(await measure(adpcm, "audio/wav")).toBeLessThanOrEqual(8192);
  });

  it("an MP3 whose Xing header claims 2^31 frames is measured by its frames", async () => {
    const { bytes } = await variant(2);
    const at = bytes.indexOf("Xing");
    expect(at).toBeGreaterThan(0);
    const lying = Buffer.from(bytes);
    expect(lying.readUInt32BE(at + 4) & 1).toBe(1);
    lying.writeUInt32BE(0x7fffffff, at + 8);
    expectClose(await measure(lying, "audio/mpeg"), (await decodedMs(bytes))!);
  });

  it("an M4A whose mvhd and mdhd claim 2^31 ticks is measured by its sample tables", async () => {
    const { bytes } = await variant(4);
    const lying = Buffer.from(bytes);
    for (const box of ["mvhd", "mdhd"]) {
      const at = lying.indexOf(box);
      expect(lying[at + 4]).toBe(0);
      lying.writeUInt32BE(0x7fffffff, at + 20);
    }
    expectClose(await measure(lying, "audio/x-m4a"), (await decodedMs(bytes))!);
  });

  it("a WebM whose Info Duration claims 10^15 is measured by its blocks", async () => {
    const { bytes } = await variant(6);
    const lying = Buffer.from(bytes);
    const at = lying.indexOf(Buffer.from([0x44, 0x89]));
    expect(at).toBeGreaterThan(0);
    const size = lying[at + 2]! & 0x7f;
    if (size === 8) lying.writeDoubleBE(1e15, at + 3);
    else lying.writeFloatBE(1e15, at + 3);
    expectClose(await measure(lying, "audio/webm"), (await decodedMs(bytes))!);
  });

  it("an Ogg Opus whose last page claims a granule of 2^40 is bounded by what its packets decode to", async () => {
    const { bytes } = await variant(8);
    const lying = Buffer.from(bytes);
    lying.writeBigInt64LE(2n ** 40n, lying.lastIndexOf("OggS") + 6);
    expectClose(await measure(lying, "audio/ogg"), (await decodedMs(bytes))!);
  });

  it("the first 336 bytes of an Ogg Opus file (its header pages) are no audio: refused, never a negative duration", async () => {
    const { bytes } = await variant(8);
    await expect(measure(bytes.subarray(0, 336), "audio/ogg")).rejects.toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
  });
});
