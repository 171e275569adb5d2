/** The enrichment stages a post can request (its record's `processing`), and the order a pass runs them in. */
export type Stage = "denoise" | "trim" | "transcribe" | "waveform";

/** The order a pass runs stages in: the byte-changing ones first, each on the previous one's output. */
export const stageOrder: readonly Stage[] = ["denoise", "trim", "transcribe", "waveform"];

/** Stages whose output replaces the bytes that later stages work on. */
export const byteChangingStages: readonly Stage[] = ["denoise", "trim"];
