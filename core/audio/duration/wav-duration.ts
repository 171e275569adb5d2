/**
 * WAV: the `fmt ` chunk gives the frame size and rate; the duration is the number of whole frames of `data`
 * actually present. A `data` size larger than the file (a lie, or a truncated upload) counts only what arrived.
 * A `data` size of 0 is what a writer that cannot seek back leaves, as 0xFFFFFFFF is: the samples run to the end
 * of the file, unless what follows is chunks ending where the file does (an empty `data` chunk).
 */
import { type AudioMeter, type Measured, noAudio, samplesToMs } from "./audio-meter";
import { ByteWalker, read, type Step, skip } from "./byte-walker";

interface Format {
  tag: number;
  channels: number;
  rate: number;
  byteRate: number;
  blockAlign: number;
  bits: number;
  /** ADPCM: samples per block, from the format chunk's extension (0 when it has none). */
  samplesPerBlock: number;
}

/** Below telephone rates nothing is audio a person would post; a lower stated rate is a lie that inflates the duration. */
const minRate = 1000;
/** The slowest codecs a WAV can carry run above 1,000 bytes a second (GSM 13 kb/s, 8 kb/s MP3). */
const minByteRate = 1000;

// PCM, IEEE float, A-law, mu-law and WAVE_FORMAT_EXTENSIBLE: one block is exactly one frame of every channel.
const frameFormats = new Set([0x0001, 0x0003, 0x0006, 0x0007, 0xfffe]);

/**
 * 4-bit ADPCM: the samples a block of `bytes` holds (what ffmpeg decodes from it, a partial last block included).
 * A block opens with a header per channel that holds its first samples; IMA packs the rest in 4-byte words per
 * channel, 8 samples each, and Microsoft ADPCM two a byte, channels interleaved.
 */
const adpcmFormats = new Map<number, (bytes: number, channels: number) => number>([
  [0x0011, (bytes, channels) => (bytes < 4 * channels ? 0 : 1 + Math.floor((bytes - 4 * channels) / (4 * channels)) * 8)],
  [0x0002, (bytes, channels) => (bytes < 7 * channels ? 0 : 2 + Math.floor(((bytes - 7 * channels) * 2) / channels))],
]);

/** Chunk IDs are four printable ASCII characters. */
const isChunkId = (header: Buffer) => header.subarray(0, 4).every((byte) => byte >= 0x20 && byte <= 0x7e);

export function createWavMeter(): AudioMeter {
  let format: Format | undefined;
  let dataStart: number | undefined;
  let dataSize = 0;
  /** After a `data` chunk of size 0: where the chunks walked past it end (undefined once something is no chunk). */
  let chainEnd: number | undefined;

  const chunk: Step = read(8, (header, at) => {
    const id = header.toString("latin1", 0, 4);
    const size = header.readUInt32LE(4);
    // Chunks are word aligned: an odd size is followed by a pad byte.
    const padded = size + (size & 1);
    if (dataStart !== undefined && dataSize === 0) {
      // Past a `data` chunk of size 0: samples, or chunks that must run to the end of the file. Either way read no
      // format from them.
      if (!isChunkId(header)) {
        chainEnd = undefined;
        return undefined;
      }
      chainEnd = at + 8 + padded;
      return skip(padded, () => chunk);
    }
    if (id === "fmt ") {
      if (size < 16 || size > 4096) return undefined;
      return read(padded, (body) => {
        format = {
          tag: body.readUInt16LE(0),
          channels: body.readUInt16LE(2),
          rate: body.readUInt32LE(4),
          byteRate: body.readUInt32LE(8),
          blockAlign: body.readUInt16LE(12),
          bits: body.readUInt16LE(14),
          samplesPerBlock: size >= 20 ? body.readUInt16LE(18) : 0,
        };
        return chunk;
      });
    }
    if (id === "data") {
      if (dataStart !== undefined) return undefined;
      return skip(0, (at) => {
        dataStart = at;
        dataSize = size;
        chainEnd = at;
        return skip(padded, () => chunk);
      });
    }
    return skip(padded, () => chunk);
  });

  const walker = new ByteWalker(
    read(12, (riff) => (riff.toString("latin1", 0, 4) === "RIFF" && riff.toString("latin1", 8, 12) === "WAVE" ? chunk : undefined)),
  );

  return {
    push: (bytes) => walker.push(bytes),
    finish(totalBytes): Measured {
      if (!format) return noAudio("the WAV has no fmt chunk");
      if (dataStart === undefined) return noAudio("the WAV has no data chunk");
      const { tag, channels, rate, byteRate, blockAlign, bits } = format;
      if (channels < 1 || rate < minRate || rate > 1_536_000 || blockAlign < 1) return noAudio("the WAV format chunk is invalid");
      // The pad byte of a last odd chunk may be missing.
      const streamed = dataSize === 0 && chainEnd !== totalBytes && chainEnd !== totalBytes + 1;
      const present = Math.max(0, Math.min(streamed ? Infinity : dataSize, totalBytes - dataStart));
      if (frameFormats.has(tag)) {
        if (bits < 1 || blockAlign !== channels * Math.ceil(bits / 8)) return noAudio("the WAV frame size does not match its channels and bits");
        const frames = Math.floor(present / blockAlign);
        if (frames === 0) return noAudio("the WAV holds no samples");
        return { durationMs: samplesToMs(frames, rate) };
      }
      const blockSamples = adpcmFormats.get(tag);
      if (blockSamples && bits === 4 && blockSamples(blockAlign, channels) > 0) {
        // The stated samples per block, never more than a block holds.
        const perBlock = Math.min(format.samplesPerBlock || Infinity, blockSamples(blockAlign, channels));
        const samples = Math.floor(present / blockAlign) * perBlock + Math.min(perBlock, blockSamples(present % blockAlign, channels));
        if (samples === 0) return noAudio("the WAV holds no samples");
        return { durationMs: samplesToMs(samples, rate) };
      }
      // Other compressed WAV (GSM, MP3, ADPCM of another kind...): the average byte rate, which must be one the block size can give.
      if (byteRate < 1 || present < blockAlign) return noAudio("the WAV holds no whole block");
      return { durationMs: Math.round((present * 1000) / Math.max(byteRate, minByteRate)) };
    },
  };
}
