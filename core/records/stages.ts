/**
 * The enrichment stages a post can request (its record's `processing`), in the order a pass runs them: the
 * byte-changing ones first, each on the previous one's output; then the ones that derive from the current bytes.
 * Every other list of stages derives from this one (schemas, views, variables, the stub provider). A new stage is an
 * entry here plus its provider rows: its port (providers/provider-port.ts), its catalog and registry entries, its
 * variables (config/processing-config.ts and the variable table), and its step in the pass; the compiler asks for
 * each, and a test for the lexicon's.
 */
export const stages = [
  { name: "denoise", changesBytes: true, describesBytes: false },
  { name: "trim", changesBytes: true, describesBytes: false },
  // Ours, beyond the interface's four (docs/decisions.md#loudness): its loudness figures describe the bytes it leaves.
  { name: "normalize", changesBytes: true, describesBytes: true },
  { name: "transcribe", changesBytes: false, describesBytes: true },
  { name: "waveform", changesBytes: false, describesBytes: true },
] as const;

export type Stage = (typeof stages)[number]["name"];

/** The stage names in pass order, as a non-empty tuple (what `z.enum` takes). */
export const stageOrder = stages.map((stage) => stage.name) as [Stage, ...Stage[]];

/** Stages whose output replaces the bytes that later stages work on. */
export const byteChangingStages: readonly Stage[] = stages.filter((stage) => stage.changesBytes).map((stage) => stage.name);

/** Stages whose result describes the current bytes: when another stage changes them, a ready one is recomputed. */
export const bytesDescribingStages: readonly Stage[] = stages.filter((stage) => stage.describesBytes).map((stage) => stage.name);
