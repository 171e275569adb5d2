/**
 * Loudness measured of a blob as it was written (trim measures its output when normalize follows), so the normalize that
 * follows in the same pass starts from those figures instead of decoding and measuring the bytes again. The analysis
 * PCM of the same decode is in the PCM cache. A few hundred bytes an entry; oldest first out.
 */
import type { LoudnessReport } from "./loudness-report";
import { createRecentEntries, type RecentEntries } from "./recent-entries";

export type LoudnessCache = RecentEntries<LoudnessReport>;

export const createLoudnessCache = (maxEntries = 1024): LoudnessCache => createRecentEntries(maxEntries);
