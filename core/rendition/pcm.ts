/**
 * Decoded audio for analysis: mono 16-bit samples at 8 kHz. It serves the trim's level analysis and the waveform (20
 * points per second is 400 samples a point).
 */
export interface Pcm {
  samples: Int16Array;
  sampleRate: number;
}

export const analysisRate = 8000;

/** ffmpeg output arguments that write the analysis PCM to stdout. */
export const analysisPcmOutput = ["-map", "0:a:0", "-ac", "1", "-ar", String(analysisRate), "-f", "s16le", "-c:a", "pcm_s16le", "pipe:1"];

export const pcmFromBytes = (bytes: Buffer): Pcm => {
  // Copied so the samples are 2-byte aligned whatever offset Node's buffer pool handed out.
  const copy = new Uint8Array(bytes.length - (bytes.length % 2));
  copy.set(bytes.subarray(0, copy.length));
  return { samples: new Int16Array(copy.buffer), sampleRate: analysisRate };
};

export const pcmDurationMs = (pcm: Pcm): number => Math.round((pcm.samples.length * 1000) / pcm.sampleRate);
