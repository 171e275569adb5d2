/**
 * Loudness measured of a blob as it was written (trim measures its output while encoding it), so the normalize that
 * follows in the same pass starts from those figures instead of decoding and measuring the bytes again. The analysis
 * PCM of the same decode is in the PCM cache. A few hundred bytes an entry; oldest first out.
 */
import type { LoudnessReport } from "./loudness-report";

export interface LoudnessCache {
  get(key: string): LoudnessReport | undefined;
  set(key: string, report: LoudnessReport): void;
}

export function createLoudnessCache(maxEntries = 1024): LoudnessCache {
  const entries = new Map<string, LoudnessReport>();
  return {
    get: (key) => entries.get(key),
    set(key, report) {
      entries.delete(key);
      entries.set(key, report);
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
