/**
 * The normalize stage's target (docs/decisions.md#loudness): integrated loudness -16 LUFS for stereo and more
 * channels, -19 LUFS for mono (AES TD1004, Apple's podcast target), within ±1 LU; true peak at most -1 dBTP on the
 * stored bytes, after encoding.
 */
import { acceptedAudioTypes, type AcceptedMimeType } from "../records/accepted-types";
import type { LoudnessFigures } from "../records/loudness";

export const targetLufs = (channels: number): number => (channels === 1 ? -19 : -16);

/** The ceiling every stored output meets, lossy or not: the encoder's overshoot is taken from the limiter's ceiling below. */
export const truePeakLimitDbtp = -1;

/** The contract's tolerance: a clip within it (and under the true-peak limit) is on target, and left as it is. */
export const loudnessToleranceLu = 1;

/** What the gain search aims for: half the tolerance, so another meter's rounding cannot push an output outside. */
export const loudnessAimLu = 0.5;

/**
 * Where the limiter holds true peaks before encoding. Lossless output sits 0.2 dB under the limit (the limiter's
 * release and the resampling back from 4×); lossy output leaves its encoder 0.5 dB more, the headroom the target
 * allows for it. An output that still lands above the limit is made again with a lower ceiling.
 */
export const limiterCeilingDbtp = (mimeType: AcceptedMimeType): number => (acceptedAudioTypes[mimeType] === "wav" ? -1.2 : -1.7);

/**
 * Whether measured figures meet the target, within `toleranceLu`: a clip within the contract's is left as it is (so
 * normalizing an output, which the search may leave anywhere inside it, changes nothing); an output must be. A clip
 * with no gated loudness (silence, or one shorter than the meter's 400 ms block) has no loudness to aim for, but
 * its true peak still meets the limit: a loud word of 0.3 s at 0 dBTP is not silence.
 */
export function meetsTarget(figures: LoudnessFigures, channels: number, toleranceLu = loudnessToleranceLu): boolean {
  const { integratedLufs, truePeakDbtp } = figures;
  const underLimit = (truePeakDbtp ?? -Infinity) <= truePeakLimitDbtp;
  if (integratedLufs === null) return underLimit;
  return Math.abs(integratedLufs - targetLufs(channels)) <= toleranceLu && underLimit;
}
