/** What the transcribe and waveform stages produce, as stored and served. */
export interface TranscriptSegment {
  startMs: number;
  endMs: number;
  text: string;
}

export interface Transcript {
  text: string;
  lang?: string;
  /** The model that produced it, for the transcript record. */
  model?: string;
  segments?: TranscriptSegment[];
}

/** BBC audiowaveform JSON v2, 8 bits. */
export interface Waveform {
  version: 2;
  channels: number;
  sample_rate: number;
  samples_per_pixel: number;
  bits: 8;
  length: number;
  data: number[];
}
