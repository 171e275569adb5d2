/** What the transcribe and waveform stages produce, as stored and served. */

/** A spoken word, with the punctuation written after it. */
export interface TranscriptWord {
  text: string;
  startMs: number;
  endMs: number;
  /** The provider's confidence in thousandths (0 to 1000): records carry no floating-point numbers. */
  confidence?: number;
}

/** A sound that is not speech (laughter, applause), as the provider tags it. */
export interface TranscriptEvent {
  text: string;
  startMs: number;
  endMs: number;
}

export interface TranscriptSegment {
  startMs: number;
  endMs: number;
  text: string;
  /** Who speaks, where the provider diarizes: `speaker_0`, `speaker_1`, ... in order of first appearance. */
  speaker?: string;
  /** The segment's timed words in order; each word's text occurs in `text`, in this order. */
  words?: TranscriptWord[];
  events?: TranscriptEvent[];
}

export interface Transcript {
  text: string;
  /** BCP-47. */
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
