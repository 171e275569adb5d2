/**
 * Pass-through stub providers (docs/decisions.md#processing): reachable only by naming `stub`, or for every stage with
 * SVC_PROCESSING_STUB=true. The denoiser, trimmer and normalizer hand back the same bytes; the transcriber and
 * waveform maker answer deterministically from the audio's content address and duration, so a rerun on the same
 * bytes gives the same result. The transcript has words, speakers and a language, as the real providers' do.
 */
import { createHash } from "node:crypto";
import type { AudioRef, Denoiser, Normalizer, Transcriber, Trimmer, Waveform, WaveformMaker } from "./provider-port";
import { segmentTokens, type TimedToken } from "./transcript-segments";

/** Points per second of a waveform (docs/decisions.md#processing: about 20). */
const pointsPerSecond = 20;
const sampleRate = 8000;

export const stubDenoiser: Denoiser = { name: "stub", denoise: async (audio) => audio };

export const stubTrimmer: Trimmer = { name: "stub", trim: async (audio) => audio };

/** Hands back the same bytes, measuring nothing: every figure null. */
const unmeasured = { integratedLufs: null, truePeakDbtp: null, rangeLu: null };
export const stubNormalizer: Normalizer = { name: "stub", normalize: async (audio) => ({ audio, loudness: { ...unmeasured, before: unmeasured } }) };

/** A word every 400 ms, about a speaking rate, in sentences of eight words; two speakers take turns by sentence. */
const wordMs = 400;
const sentenceWords = 8;
const fillers = ["so", "we", "talked", "about", "the", "audio", "and", "then", "it", "played", "back", "well"];

export const stubTranscriber = (model?: string): Transcriber => ({
  name: "stub",
  ...(model !== undefined && { model }),
  transcribe: async (audio) => {
    const durationMs = audio.durationMs ?? 1000;
    const seed = createHash("sha256").update(audio.cid).digest();
    const opening = ["Stub", "transcript", "of", audio.cid.slice(-8)];
    const count = Math.max(opening.length, Math.floor(durationMs / wordMs));
    const step = durationMs / count;
    const tokens: TimedToken[] = [];
    for (let i = 0; i < count; i++) {
      const sentence = i < opening.length ? 0 : Math.floor((i - opening.length) / sentenceWords) + 1;
      const ends = i === count - 1 || i === opening.length - 1 || (i >= opening.length && (i - opening.length) % sentenceWords === sentenceWords - 1);
      const filler = fillers[(seed[i % seed.length]! + i) % fillers.length]!;
      const first = i >= opening.length && (i - opening.length) % sentenceWords === 0;
      const word = opening[i] ?? (first ? filler[0]!.toUpperCase() + filler.slice(1) : filler);
      const startMs = Math.round(i * step);
      tokens.push({ before: " ", text: ends ? `${word}.` : word, startMs, endMs: Math.round(i * step + step * 0.75), speaker: `stub_${sentence % 2}`, confidence: 1 });
    }
    return { text: tokens.map((t) => t.text).join(" "), lang: "en", model: model ?? "stub", segments: segmentTokens(tokens) };
  },
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
