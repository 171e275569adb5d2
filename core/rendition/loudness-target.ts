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

/** We aim within half of the ±1 LU the target allows, so another meter's rounding cannot push a clip outside. */
export const loudnessToleranceLu = 0.5;

/**
 * Where the limiter holds true peaks before encoding. Lossless output sits 0.2 dB under the limit (the limiter's
 * release and the resampling back from 4×); lossy output leaves its encoder 0.5 dB more, the headroom the target
 * allows for it. An output that still lands above the limit is made again with a lower ceiling.
 */
export const limiterCeilingDbtp = (mimeType: AcceptedMimeType): number => (acceptedAudioTypes[mimeType] === "wav" ? -1.2 : -1.7);

/** Whether measured figures already meet the target: such a clip is left as it is. */
export function meetsTarget(figures: LoudnessFigures, channels: number): boolean {
  const { integratedLufs, truePeakDbtp } = figures;
  if (integratedLufs === null) return true;
  return Math.abs(integratedLufs - targetLufs(channels)) <= loudnessToleranceLu && (truePeakDbtp ?? -Infinity) <= truePeakLimitDbtp;
}
