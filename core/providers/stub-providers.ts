/**
 * Pass-through stub providers (docs/decisions.md#processing): reachable only by naming `stub`, or for every stage with
 * SVC_PROCESSING_STUB=true. The denoiser and trimmer hand back the same bytes; the transcriber and waveform maker
 * answer deterministically from the audio's content address, so a rerun on the same bytes gives the same result.
 */
import { createHash } from "node:crypto";
import type { AudioRef, Denoiser, Transcriber, Trimmer, Waveform, WaveformMaker } from "./provider-port";

/** Points per second of a waveform (docs/decisions.md#processing: about 20). */
const pointsPerSecond = 20;
const sampleRate = 8000;

export const stubDenoiser: Denoiser = { name: "stub", denoise: async (audio) => audio };

export const stubTrimmer: Trimmer = { name: "stub", trim: async (audio) => audio };

export const stubTranscriber = (model?: string): Transcriber => ({
  name: "stub",
  ...(model !== undefined && { model }),
  transcribe: async (audio) => ({
    text: `Stub transcript of ${audio.cid.slice(-8)}.`,
    lang: "en",
    model: model ?? "stub",
    segments: [{ startMs: 0, endMs: audio.durationMs ?? 1000, text: `Stub transcript of ${audio.cid.slice(-8)}.` }],
  }),
});

export const stubWaveformMaker: WaveformMaker = { name: "stub", waveform: async (audio) => stubWaveform(audio) };

/** A valid BBC JSON v2 waveform, 8 bits, one channel, about 20 points per second of the audio's duration. */
export const stubWaveform = (audio: AudioRef): Waveform => {
  const length = Math.max(1, Math.round(((audio.durationMs ?? 1000) / 1000) * pointsPerSecond));
  const seed = createHash("sha256").update(audio.cid).digest();
  const data: number[] = [];
  for (let i = 0; i < length; i++) {
    const peak = seed[i % seed.length]! % 128;
    data.push(-peak, peak);
  }
  return { version: 2, channels: 1, sample_rate: sampleRate, samples_per_pixel: sampleRate / pointsPerSecond, bits: 8, length, data };
};
