/**
 * The provider port: what an enrichment stage asks of whoever does the work (a stub, the rendition service,
 * ElevenLabs, Amazon Transcribe). Providers read and write the shared blob store; no audio is passed by value.
 */
import type { AcceptedMimeType } from "../records/accepted-types";
import type { Stage } from "../records/stages";
import type { Transcript, Waveform } from "../records/stage-outputs";
import type { Loudness } from "../records/loudness";

// The stages and what they produce are record shapes (lower than any provider); re-exported for the port's users.
export { byteChangingStages, bytesDescribingStages, stageOrder, type Stage } from "../records/stages";
export type { Transcript, TranscriptEvent, TranscriptSegment, TranscriptWord, Waveform } from "../records/stage-outputs";

/** Audio in the blob store at `blobs/<appId>/<cid>`: the upload, or a processed variant of it. */
export interface AudioRef {
  appId: string;
  cid: string;
  mimeType: AcceptedMimeType;
  size: number;
  durationMs: number | null;
}

/** What every provider call gets: a deadline it must respect (the worker's remaining time) and its abort signal. */
export interface ProviderCall {
  signal: AbortSignal;
  /** Epoch milliseconds by which the call must have returned. */
  deadline: number;
  /**
   * The stages the pass will run after this one, on its output: a provider may prepare for them (the rendition
   * trimmer has its output's loudness measured when normalize follows). Absent: nothing is known to follow.
   */
  then?: readonly Stage[];
}

/** Writes a processed variant to `blobs/<appId>/<cid of its bytes>` and describes it (same MIME family as the input). */
export interface Denoiser {
  readonly name: string;
  denoise(audio: AudioRef, call: ProviderCall): Promise<AudioRef>;
}

export interface Trimmer {
  readonly name: string;
  trim(audio: AudioRef, call: ProviderCall): Promise<AudioRef>;
}

/** A variant at its loudness target, and the figures of it and of the audio it started from. */
export interface NormalizedAudio {
  audio: AudioRef;
  loudness: Loudness;
}

export interface Normalizer {
  readonly name: string;
  normalize(audio: AudioRef, call: ProviderCall): Promise<NormalizedAudio>;
}

export interface Transcriber {
  readonly name: string;
  readonly model?: string;
  transcribe(audio: AudioRef, call: ProviderCall): Promise<Transcript>;
}

export interface WaveformMaker {
  readonly name: string;
  waveform(audio: AudioRef, call: ProviderCall): Promise<Waveform>;
}

export interface StageProviders {
  denoise: Denoiser;
  trim: Trimmer;
  normalize: Normalizer;
  transcribe: Transcriber;
  waveform: WaveformMaker;
}

/**
 * How a provider reports failure. `retry`: the queue should try again later (429, 5xx, network, timeout, or an
 * asynchronous job still running); `fail`: no retry can fix it (a 4xx, a malformed answer), the stage settles
 * `failed` with `provider_error`. A provider never puts its API key in the message.
 */
export class ProviderError extends Error {
  /** A `retry` the provider timed (its `Retry-After`): the next attempt waits at least this long. */
  readonly retryAfterMs?: number;
  constructor(
    readonly disposition: "retry" | "fail",
    message: string,
    readonly reason: "provider_error" | "timeout" = "provider_error",
    options?: { cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    super(message, options);
    this.name = "ProviderError";
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}
