import type { Transcript, TranscriptSegment } from "./stage-outputs";
import { nsids } from "./nsids";
import type { StrongRef } from "./post-schema";
import audioTranscript from "../../lexicons/dev.svc.audio.transcript.json";

/** The longest model name a transcript record holds, as its lexicon says. */
export const maxModelLength: number = audioTranscript.defs.main.record.properties.model.maxLength;

/**
 * The dev.svc.audio.transcript record (docs/decisions.md#transcripts): one per post, about the post it names.
 * `lang`, and each segment's `speaker`, `words` and `events`, are optional: records stored before them still read.
 */
export interface TranscriptRecord {
  $type: typeof nsids.transcript;
  subject: StrongRef;
  text: string;
  lang?: string;
  model?: string;
  segments?: TranscriptSegment[];
  createdAt: string;
}

const timed = <T extends { startMs: number; endMs: number }>(span: T): T => ({ ...span, startMs: Math.round(span.startMs), endMs: Math.round(span.endMs) });

const segmentOf = (s: TranscriptSegment): TranscriptSegment => ({
  ...timed({ startMs: s.startMs, endMs: s.endMs, text: s.text }),
  ...(s.speaker !== undefined && { speaker: s.speaker }),
  ...(s.words !== undefined && { words: s.words.map(timed) }),
  ...(s.events !== undefined && { events: s.events.map(timed) }),
});

export const buildTranscriptRecord = (subject: StrongRef, transcript: Transcript, now: Date): TranscriptRecord => ({
  $type: nsids.transcript,
  subject,
  text: transcript.text,
  ...(transcript.lang !== undefined && { lang: transcript.lang }),
  ...(transcript.model !== undefined && { model: transcript.model }),
  ...(transcript.segments !== undefined && { segments: transcript.segments.map(segmentOf) }),
  createdAt: now.toISOString(),
});
