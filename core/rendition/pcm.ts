import type { Waveform } from "../records/stage-outputs";
import { WavWaveform, waveformSourceOutput } from "./waveform-points";

/** Decoded audio for analysis: mono 16-bit samples at 8 kHz, for the trim's level analysis and the durations. */
export interface Pcm {
  samples: Int16Array;
  sampleRate: number;
}

/**
 * A decode's analysis PCM with the waveform the same decode made at the audio's own rate: what the cache keeps. No
 * waveform where the decode made none (a trim a normalize follows: normalize makes its output's, the one a waveform
 * stage reads); a waveform asked of such a blob decodes it again (analysis-pcm.ts).
 */
export interface AnalysisPcm extends Pcm {
  waveform?: Waveform;
}

export const hasWaveform = (pcm: AnalysisPcm | undefined): pcm is AnalysisPcm & { waveform: Waveform } => pcm?.waveform !== undefined;

export const analysisRate = 8000;

/**
 * ffmpeg output arguments that write the analysis PCM to stdout. `-flush_packets 0` lets ffmpeg fill its 32 KiB
 * buffer before each write: flushed per packet, a minute of Opus is 3,000 writes of 320 bytes, and reading them cost
 * this process more CPU than the decode's own samples did.
 */
export const analysisPcmOutput = ["-map", "0:a:0", "-ac", "1", "-ar", String(analysisRate), "-f", "s16le", "-c:a", "pcm_s16le", "-flush_packets", "0", "pipe:1"];

export const pcmFromBytes = (bytes: Buffer): Pcm => {
  // Copied so the samples are 2-byte aligned whatever offset Node's buffer pool handed out.
  const copy = new Uint8Array(bytes.length - (bytes.length % 2));
  copy.set(bytes.subarray(0, copy.length));
  return { samples: new Int16Array(copy.buffer), sampleRate: analysisRate };
};

/**
 * The outputs of an ffmpeg run that writes the analysis PCM to stdout and, unless `waveform` is false, the
 * waveform's source to pipe:3: `args` to add to the run, `onPipe3` for its options, and `read`, which makes the run's
 * collected stdout the AnalysisPcm. The waveform's stream is most of what the run sends this process (5.8 MB a minute
 * at 48 kHz, about 37 ms of this process's CPU to read), so a decode whose waveform nobody will read makes none.
 */
export function analysisOutputs(waveform = true) {
  if (!waveform) return { args: analysisPcmOutput, onPipe3: undefined, read: (stdout: Buffer): AnalysisPcm => pcmFromBytes(stdout) };
  const points = new WavWaveform();
  return {
    args: [...analysisPcmOutput, ...waveformSourceOutput],
    onPipe3: (chunk: Buffer) => points.push(chunk),
    read: (stdout: Buffer): AnalysisPcm => ({ ...pcmFromBytes(stdout), waveform: points.finish() }),
  };
}

export const pcmDurationMs = (pcm: Pcm): number => Math.round((pcm.samples.length * 1000) / pcm.sampleRate);
