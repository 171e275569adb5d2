/** What every container's duration meter does: watch the bytes go by, then say how long the audio they hold plays. */
export type Measured = { durationMs: number } | { refused: string };

export interface AudioMeter {
  /** Synchronous and allocation-light: called for every chunk of the upload. */
  push(chunk: Buffer): void;
  /** After the last chunk: the duration the bytes hold, or why they are not playable audio of this family. */
  finish(totalBytes: number): Measured;
}

export const noAudio = (what: string): Measured => ({ refused: `no audio: ${what}` });

/** Milliseconds from a count of samples at a rate, never negative. */
export const samplesToMs = (samples: number, rate: number) => Math.max(0, Math.round((samples * 1000) / rate));
