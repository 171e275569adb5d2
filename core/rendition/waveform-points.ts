/**
 * BBC audiowaveform JSON v2, 8 bits, 20 points per second, from the audio at its own sample rate, as audiowaveform
 * makes it: each point the minimum and maximum of its samples, scaled to 8 bits as waveform-data (Audacity's summary)
 * scales them, floor(127 × sample), the last point from the samples that remain.
 *
 * The samples arrive as a stream (ffmpeg's mono 16-bit WAV on a pipe beside the analysis PCM) and are reduced as they
 * come: a clip's points are kept, never its samples. The 8 kHz analysis PCM would not do: resampling to 8 kHz drops
 * everything above 4 kHz, and with it most of a sibilant's or a cymbal's peaks.
 */
import type { Waveform } from "../records/stage-outputs";
import { FfmpegError } from "./run-ffmpeg";

export const pointsPerSecond = 20;

/**
 * ffmpeg output arguments that write the waveform's source, mono 16-bit WAV at the input's own rate, to pipe:3, in
 * 32 KiB writes rather than one per packet (pcm.ts says why). Without the input's tags: the WAV muxer writes them as
 * a LIST chunk whose size it fixes by seeking back, which a pipe allows only within its buffer (show notes past
 * 32 KB left the size at 4 GiB); bitexact drops the encoder's own tag too.
 */
export const waveformSourceOutput = [
  ...["-map", "0:a:0", "-map_metadata", "-1", "-ac", "1", "-c:a", "pcm_s16le", "-flags:a", "+bitexact", "-fflags", "+bitexact"],
  ...["-f", "wav", "-flush_packets", "0", "pipe:3"],
];

/** The WAV header ffmpeg writes here is under 100 bytes; one this long is not that header. */
const maxHeaderBytes = 64 * 1024;

/** floor(127 × s / 32768) is exact in doubles (s is a 16-bit integer), and floor is monotonic: min and max commute with it. */
const to8Bits = (sample: number) => Math.floor((127 * sample) / 32768);

/** The waveform of 16-bit mono samples at `sampleRate`, pushed in any number of pieces. */
export class WaveformPoints {
  readonly samplesPerPixel: number;
  private readonly data: number[] = [];
  private inPoint = 0;
  private min = Infinity;
  private max = -Infinity;

  constructor(readonly sampleRate: number) {
    this.samplesPerPixel = Math.max(1, Math.round(sampleRate / pointsPerSecond));
  }

  push(samples: Int16Array): void {
    const spp = this.samplesPerPixel;
    let { inPoint, min, max } = this;
    for (let i = 0; i < samples.length; i++) {
      const sample = samples[i]!;
      if (sample < min) min = sample;
      if (sample > max) max = sample;
      if (++inPoint === spp) {
        this.data.push(to8Bits(min), to8Bits(max));
        inPoint = 0;
        min = Infinity;
        max = -Infinity;
      }
    }
    Object.assign(this, { inPoint, min, max });
  }

  finish(): Waveform {
    if (this.inPoint > 0) this.data.push(to8Bits(this.min), to8Bits(this.max));
    this.inPoint = 0;
    const { sampleRate, samplesPerPixel, data } = this;
    return { version: 2, channels: 1, sample_rate: sampleRate, samples_per_pixel: samplesPerPixel, bits: 8, length: data.length / 2, data };
  }
}

/**
 * Reads ffmpeg's streamed WAV: the header's chunks up to `data` (the rate from `fmt `; a streamed file's sizes are
 * placeholders, so everything after `data` is samples), then the samples, a byte held over when a piece splits one.
 */
export class WavWaveform {
  private header: Buffer | undefined = Buffer.alloc(0);
  private points: WaveformPoints | undefined;
  private held: Buffer | undefined;
  private sampleRate = 0;

  push(chunk: Buffer): void {
    if (this.header) return this.readHeader(Buffer.concat([this.header, chunk]));
    let bytes = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = undefined;
    if (bytes.length % 2) {
      this.held = Buffer.from(bytes.subarray(bytes.length - 1));
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    if (bytes.length === 0) return;
    // Int16Array needs an even offset; a piece of Node's pooled memory may start at an odd one.
    const aligned = bytes.byteOffset % 2 ? Buffer.from(bytes) : bytes;
    this.points!.push(new Int16Array(aligned.buffer, aligned.byteOffset, aligned.length / 2));
  }

  /** The waveform of what was pushed; throws when no WAV header arrived (ffmpeg wrote nothing). */
  finish(): Waveform {
    if (!this.points) throw new FfmpegError("the waveform's WAV stream ended before its samples", "");
    return this.points.finish();
  }

  private readHeader(bytes: Buffer): void {
    this.header = bytes;
    if (bytes.length < 12) return;
    if (bytes.toString("latin1", 0, 4) !== "RIFF" || bytes.toString("latin1", 8, 12) !== "WAVE") throw new FfmpegError("the waveform's stream is not WAV", "");
    for (let at = 12; at + 8 <= bytes.length; ) {
      const id = bytes.toString("latin1", at, at + 4);
      if (id === "data") {
        if (!this.sampleRate) throw new FfmpegError("the waveform's WAV has no fmt chunk before its data", "");
        this.header = undefined;
        this.points = new WaveformPoints(this.sampleRate);
        return this.push(bytes.subarray(at + 8));
      }
      const size = bytes.readUInt32LE(at + 4);
      if (at + 8 + size + (size % 2) > bytes.length) break;
      if (id === "fmt ") this.sampleRate = bytes.readUInt32LE(at + 12);
      at += 8 + size + (size % 2);
    }
    // Still no samples: wait for more, unless this is no header ffmpeg would write (a chunk size never fixed up).
    if (bytes.length > maxHeaderBytes) throw new FfmpegError(`the waveform's WAV header passed ${maxHeaderBytes} bytes`, "");
  }
}
