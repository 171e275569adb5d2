/**
 * Where the sound starts and ends, with a threshold that follows the clip's own noise floor. A fixed threshold
 * fails on real recordings: speech over a floor near -38 dBFS has no "silence" below -40 dB at all.
 */
import type { Pcm } from "./pcm";

/** Level analysis window. */
const windowMs = 20;
/** A run this long above the threshold counts as sound; shorter blips (a click) do not. */
const minRunWindows = 3;
/** Silence kept before the first and after the last sound. */
export const keptSilenceMs = 150;
/**
 * Less than this to gain at both ends is nothing to trim. A cut between packets keeps up to one more packet (20 to
 * 26 ms) and lands on a different window grid, so a trimmed clip judged again finds up to about 60 ms to gain:
 * under this, trimming it again changes no bytes, and a rerun of trim reruns nothing downstream.
 */
export const minGainMs = 100;
/** Below this spread between the quiet and the loud parts nothing tells sound from noise: the clip is kept whole. */
const minContrastDb = 6;
const digitalSilenceDb = -120;
/**
 * A window louder than this is sound, whatever the floor. In a clip with no pause the quietest 200 ms is speech, and
 * a threshold above it cut the quieter speech at the ends (-25 dBFS after -9). A noisy recording's floor (near
 * -38 dBFS) still trims: 3 dB over a steady noise is several times its swing between 20 ms windows. Noise louder than
 * this is as loud as quiet speech, and no level tells the two apart: such a clip is kept whole, as keeping sound
 * matters more than trimming noise.
 */
const loudestSilenceDb = -35;

export interface LevelProfile {
  /** dBFS of each window, RMS. */
  levels: Float64Array;
  /** The quietest stretch's mean level: the noise floor, found from any 200 ms of pause. */
  floorDb: number;
  /** The loudest stretch's mean level. */
  loudDb: number;
  /** Windows above this are sound. */
  thresholdDb: number;
}

/** Floor and peak are judged over stretches this long, so one quiet or loud window (a click) does not decide them. */
const stretchWindows = 10;

export function levelProfile(pcm: Pcm): LevelProfile {
  const size = Math.max(1, Math.round((pcm.sampleRate * windowMs) / 1000));
  const count = Math.floor(pcm.samples.length / size);
  const levels = new Float64Array(count);
  for (let w = 0; w < count; w++) {
    let sum = 0;
    for (let i = w * size, end = i + size; i < end; i++) {
      const s = pcm.samples[i]! / 32768;
      sum += s * s;
    }
    const rms = Math.sqrt(sum / size);
    levels[w] = rms > 0 ? Math.max(digitalSilenceDb, 20 * Math.log10(rms)) : digitalSilenceDb;
  }
  let floorDb = count ? Infinity : digitalSilenceDb;
  let loudDb = count ? -Infinity : digitalSilenceDb;
  const stretch = Math.min(stretchWindows, count);
  let sum = 0;
  for (let w = 0; w < count; w++) {
    sum += levels[w]!;
    if (w >= stretch) sum -= levels[w - stretch]!;
    if (w >= stretch - 1) {
      floorDb = Math.min(floorDb, sum / stretch);
      loudDb = Math.max(loudDb, sum / stretch);
    }
  }
  // Halfway up from the floor, at most 10 dB above it (quiet speech over noise), never more than 40 dB under the
  // loud parts (so encoder noise over digital silence does not count as sound), and never above `loudestSilenceDb`.
  const thresholdDb = Math.min(loudestSilenceDb, Math.max(floorDb + Math.min(10, (loudDb - floorDb) / 2), loudDb - 40));
  return { levels, floorDb, loudDb, thresholdDb };
}

export interface SpeechBounds {
  startMs: number;
  endMs: number;
}

/**
 * The span to keep: from `keptSilenceMs` before the first sustained sound to `keptSilenceMs` after the last, or
 * undefined when the clip has nothing to trim (no contrast, all silence, or less than `minGainMs` to gain at both ends).
 */
export function speechBounds(pcm: Pcm): SpeechBounds | undefined {
  const profile = levelProfile(pcm);
  const { levels, thresholdDb } = profile;
  if (profile.loudDb - profile.floorDb < minContrastDb) return undefined;
  let first = -1;
  let last = -1;
  let run = 0;
  for (let w = 0; w < levels.length; w++) {
    run = levels[w]! > thresholdDb ? run + 1 : 0;
    if (run === minRunWindows) {
      if (first < 0) first = w - minRunWindows + 1;
    }
    if (run >= minRunWindows) last = w;
  }
  if (first < 0) return undefined;
  const totalMs = (pcm.samples.length * 1000) / pcm.sampleRate;
  const startMs = Math.max(0, first * windowMs - keptSilenceMs);
  const endMs = Math.min(totalMs, (last + 1) * windowMs + keptSilenceMs);
  if (startMs < minGainMs && totalMs - endMs < minGainMs) return undefined;
  return { startMs: Math.round(startMs), endMs: Math.round(endMs) };
}
