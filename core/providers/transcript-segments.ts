/**
 * Timed words into transcript segments: a segment ends after a word that ends a sentence, or once it has run about
 * 12 seconds, so a reader can follow along and seek. Each token carries the text that separates it from the one
 * before (a space, or nothing before punctuation), so languages written without spaces keep their text intact.
 */
import type { TranscriptSegment } from "./provider-port";

export interface TimedToken {
  /** The separator written before this token (" " for a word in most languages, "" for punctuation). */
  before: string;
  text: string;
  /** Absent for tokens that have no time of their own (Transcribe's punctuation). */
  startMs?: number;
  endMs?: number;
}

export const segmentSeconds = 12;
const sentenceEnd = /[.!?。！？…]["'”’)\]]*$/;

export function segmentTokens(tokens: readonly TimedToken[]): TranscriptSegment[] {
  const segments: TranscriptSegment[] = [];
  let text = "";
  let startMs: number | undefined;
  let endMs: number | undefined;
  const close = () => {
    const trimmed = text.trim();
    if (trimmed && startMs !== undefined && endMs !== undefined) segments.push({ startMs, endMs, text: trimmed });
    text = "";
    startMs = undefined;
    endMs = undefined;
  };
  for (const token of tokens) {
    const timed = token.startMs !== undefined && token.endMs !== undefined;
    // A long segment is cut before the next timed word, never between a word and its punctuation.
    if (timed && startMs !== undefined && endMs !== undefined && endMs - startMs >= segmentSeconds * 1000) close();
    text += text ? token.before + token.text : token.text;
    if (timed) {
      startMs ??= token.startMs;
      endMs = Math.max(endMs ?? 0, token.endMs!);
    }
    if (sentenceEnd.test(token.text)) close();
  }
  close();
  return segments;
}
