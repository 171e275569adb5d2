/**
 * WAV: the `fmt ` chunk gives the frame size and rate; the duration is the number of whole frames of `data`
 * actually present. A `data` size larger than the file (a lie, or a truncated upload) counts only what arrived.
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
}

/** Below telephone rates nothing is audio a person would post; a lower stated rate is a lie that inflates the duration. */
const minRate = 1000;
/** The slowest codecs a WAV can carry run above 1,000 bytes a second (GSM 13 kb/s, 8 kb/s MP3). */
const minByteRate = 1000;

// PCM, IEEE float, A-law, mu-law and WAVE_FORMAT_EXTENSIBLE: one block is exactly one frame of every channel.
const frameFormats = new Set([0x0001, 0x0003, 0x0006, 0x0007, 0xfffe]);

export function createWavMeter(): AudioMeter {
  let format: Format | undefined;
  let dataStart: number | undefined;
  let dataSize = 0;

  const chunk: Step = read(8, (header) => {
    const id = header.toString("latin1", 0, 4);
    const size = header.readUInt32LE(4);
    // Chunks are word aligned: an odd size is followed by a pad byte.
    const padded = size + (size & 1);
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
        };
        return chunk;
      });
    }
    if (id === "data") {
      if (dataStart !== undefined) return undefined;
      return skip(0, (at) => {
        dataStart = at;
        dataSize = size;
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
      const present = Math.max(0, Math.min(dataSize, totalBytes - dataStart));
      if (frameFormats.has(tag)) {
        if (bits < 1 || blockAlign !== channels * Math.ceil(bits / 8)) return noAudio("the WAV frame size does not match its channels and bits");
        const frames = Math.floor(present / blockAlign);
        if (frames === 0) return noAudio("the WAV holds no samples");
        return { durationMs: samplesToMs(frames, rate) };
      }
      // Compressed WAV (ADPCM, GSM, MP3...): the average byte rate, which must be one the block size can give.
      if (byteRate < 1 || present < blockAlign) return noAudio("the WAV holds no whole block");
      return { durationMs: Math.round((present * 1000) / Math.max(byteRate, minByteRate)) };
    },
  };
}
