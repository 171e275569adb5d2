import { describe, expect, it } from "vitest";
import { encodedNoise } from "../../../test/support/audio-fixtures";
import { decodedBytesMs, measuredMs } from "../../../test/support/measured-duration";

const measure = (bytes: Buffer) => measuredMs(bytes, "audio/wav");
const decoded = decodedBytesMs;

/** Where a chunk's 8-byte header starts (ffmpeg writes fmt, then LIST, then data). */
const chunkAt = (wav: Buffer, id: string) => {
  const at = wav.indexOf(id, 12, "latin1");
  expect(at).toBeGreaterThan(0);
  return at;
};

describe("ADPCM WAV counts samples per block", () => {
  const adpcm = [
    ["IMA ADPCM", 0x0011, "adpcm_ima_wav"],
    ["Microsoft ADPCM", 0x0002, "adpcm_ms"],
  ] as const;

  it.each(adpcm)("%s: whole blocks times the samples each holds, not the header's byte rate", async (_name, tag, codec) => {
    const { bytes } = await encodedNoise(`wav-${codec}`, "audio/wav", 6, ["-c:a", codec, "-f", "wav"]);
    const fmt = chunkAt(bytes, "fmt ");
    expect(bytes.readUInt16LE(fmt + 8)).toBe(tag);
    // ffmpeg's header states a byte rate that is not the stream's: measuring by it read these three times too long.
    const blockMs = (bytes.readUInt16LE(fmt + 26) * 1000) / 44_100;
    for (const wav of [bytes, bytes.subarray(0, Math.floor(bytes.length * 0.6))]) {
      const ms = await measure(wav);
      expect(Math.abs(ms - (await decoded(wav))), `${ms} ms`).toBeLessThanOrEqual(blockMs);
    }
    expect(Math.abs((await measure(bytes)) - 6000)).toBeLessThanOrEqual(blockMs);
  });

  it.each(adpcm)("%s stating more samples per block than its blocks hold is measured by what they hold", async (_name, _tag, codec) => {
    const { bytes } = await encodedNoise(`wav-${codec}`, "audio/wav", 6, ["-c:a", codec, "-f", "wav"]);
    const lying = Buffer.from(bytes);
    lying.writeUInt16LE(0xffff, chunkAt(lying, "fmt ") + 26);
    expect(await measure(lying)).toBe(await measure(bytes));
  });
});

describe("a WAV whose data size is 0", () => {
  const streamedWav = async () => {
    const { bytes } = await encodedNoise("wav-8k-mono-s16", "audio/wav", 6, ["-ac", "1", "-ar", "8000", "-c:a", "pcm_s16le", "-f", "wav"]);
    const wav = Buffer.from(bytes);
    const data = chunkAt(wav, "data");
    expect(data + 8 + wav.readUInt32LE(data + 4)).toBe(wav.length);
    wav.writeUInt32LE(0, data + 4);
    return { wav, data };
  };

  it("is a streaming writer's placeholder, as 0xFFFFFFFF is: its samples run to the end of the file", async () => {
    const { wav, data } = await streamedWav();
    expect(await measure(wav)).toBe(6000);
    expect(Math.abs(6000 - (await decoded(wav)))).toBeLessThanOrEqual(1);
    // Samples that happen to start like a chunk header (four printable bytes) are still samples.
    wav.write("ABCD", data + 8, "latin1");
    wav.writeUInt32LE(16, data + 12);
    expect(await measure(wav)).toBe(6000);
    const ff = Buffer.from(wav);
    ff.writeUInt32LE(0xffffffff, data + 4);
    expect(await measure(ff)).toBe(6000);
  });

  it("followed by nothing, or by chunks that end where the file does, is empty: refused", async () => {
    const { wav, data } = await streamedWav();
    const header = wav.subarray(0, data + 8);
    const list = Buffer.from("LIST\x05\x00\x00\x00INFO\x00\x00", "latin1");
    for (const empty of [header, Buffer.concat([header, list]), Buffer.concat([header, list.subarray(0, -1)])]) {
      await expect(measure(empty)).rejects.toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    }
  });
});
