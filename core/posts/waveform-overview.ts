/**
 * List items carry an overview of each waveform, light enough for a feed: at most 256 points in the same BBC v2
 * format, a whole number of the original points per bucket (so `samples_per_pixel` stays whole and the overview
 * spans the whole clip), each bucket the min of its mins and the max of its maxes. A single post keeps them all.
 */
import WaveformData from "waveform-data";
import type { Waveform } from "../records/stage-outputs";

export const overviewMaxPoints = 256;

export function waveformOverview(waveform: Waveform, maxPoints = overviewMaxPoints): Waveform {
  if (waveform.length <= maxPoints) return waveform;
  const factor = Math.ceil(waveform.length / maxPoints);
  // waveform-data's resampler, at a whole multiple of the scale, takes exactly min of mins and max of maxes.
  return WaveformData.create(waveform).resample({ scale: waveform.samples_per_pixel * factor }).toJSON() as Waveform;
}
