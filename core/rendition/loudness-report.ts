/**
 * Reads what ffmpeg printed for a loudness probe: the ebur128 filter's summary (integrated loudness, loudness range,
 * true peak) and the ashowinfo line of the first sample (channel count and sample rate).
 */
import type { LoudnessFigures } from "../records/loudness";

export interface LoudnessReport {
  loudness: LoudnessFigures;
  channels: number;
  sampleRate: number;
}

/** ebur128's absolute gate: a clip with no block above it has no gated loudness, and ebur128 prints this floor. */
const absoluteGateLufs = -70;

const figure = (text: string, pattern: RegExp): number | undefined => {
  const value = Number(pattern.exec(text)?.[1]);
  return Number.isFinite(value) ? value : undefined;
};

/** undefined when stderr holds no complete report (ffmpeg printed something else, or the tail was cut). */
export function parseLoudnessReport(stderr: string): LoudnessReport | undefined {
  const info = /\bchannels:(\d+) .*\brate:(\d+)/.exec(stderr);
  // ffmpeg may configure the graph twice and print a summary for each: the last one measured the clip.
  const summary = stderr.slice(stderr.lastIndexOf("Summary:"));
  const peakText = /Peak:\s+(\S+) dBFS/.exec(summary)?.[1];
  const integrated = figure(summary, /\bI:\s+(\S+) LUFS/);
  const range = figure(summary, /\bLRA:\s+(\S+) LU\b/);
  if (!info || !stderr.includes("Summary:") || integrated === undefined || range === undefined || peakText === undefined) return undefined;
  const truePeak = figure(peakText, /^(.*)$/);
  if (truePeak === undefined && peakText !== "-inf") return undefined;
  const gated = integrated > absoluteGateLufs;
  return {
    loudness: {
      integratedLufs: gated ? integrated : null,
      // -inf: digital silence has no peak to report.
      truePeakDbtp: truePeak ?? null,
      rangeLu: gated ? range : null,
    },
    channels: Number(info[1]),
    sampleRate: Number(info[2]),
  };
}
