import type { Transcript } from "./stage-outputs";
import { nsids } from "./nsids";
import type { StrongRef } from "./post-schema";

/** The dev.svc.audio.transcript record (docs/decisions.md#transcripts): one per post, about the post it names. */
export interface TranscriptRecord {
  $type: typeof nsids.transcript;
  subject: StrongRef;
  text: string;
  lang?: string;
  model?: string;
  segments?: { startMs: number; endMs: number; text: string }[];
  createdAt: string;
}

export const buildTranscriptRecord = (subject: StrongRef, transcript: Transcript, now: Date): TranscriptRecord => ({
  $type: nsids.transcript,
  subject,
  text: transcript.text,
  ...(transcript.lang !== undefined && { lang: transcript.lang }),
  ...(transcript.model !== undefined && { model: transcript.model }),
  ...(transcript.segments !== undefined && {
    segments: transcript.segments.map((s) => ({ startMs: Math.round(s.startMs), endMs: Math.round(s.endMs), text: s.text })),
  }),
  createdAt: now.toISOString(),
});
