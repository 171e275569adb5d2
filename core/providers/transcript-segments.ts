/**
 * A provider's timed tokens into transcript segments: a segment ends after a word that ends a sentence, where the
 * speaker changes, or once it has run about 12 seconds, so a reader can follow along and seek. Each token carries
 * the text that separates it from the one before (a space, or nothing before punctuation), so languages written
 * without spaces keep their text intact, and every word's text occurs in its segment's text, in order: a caption
 * can be cut at any word boundary by slicing the segment's text.
 */
import { ProviderError, type TranscriptEvent, type TranscriptSegment, type TranscriptWord } from "./provider-port";

export interface TimedToken {
  /**
   * `word` (the default) is spoken; `punctuation` joins the word before it (Transcribe gives it no time of its own);
   * `event` is a sound that is not speech (laughter): kept on the segment beside the words, not in its text.
   */
  kind?: "word" | "punctuation" | "event";
  /** The separator written before this token (" " for a word in most languages, "" for punctuation). */
  before: string;
  text: string;
  /** Absent for tokens that have no time of their own. A word without times is text, not one of the words. */
  startMs?: number;
  endMs?: number;
  /** The provider's speaker label, where it diarizes. */
  speaker?: string;
  /** 0 to 1. */
  confidence?: number;
}

export const segmentSeconds = 12;
const sentenceEnd = /[.!?。！？…]["'”’)\]]*$/;

interface OpenSegment {
  text: string;
  startMs?: number;
  endMs?: number;
  speaker?: string;
  words: TranscriptWord[];
  events: TranscriptEvent[];
}

/**
 * Throws the provider's malformed answer (`fail`: no retry fixes it) unless every timed token has safe-integer
 * times with 0 <= startMs <= endMs and each timed word starts no earlier than the one before: the transcript record
 * holds such times only, and a segment spans its words only then.
 */
function checkTimes(tokens: readonly TimedToken[], source: string): void {
  let previousStart = 0;
  tokens.forEach((token, i) => {
    if (token.startMs === undefined || token.endMs === undefined) return;
    const { startMs, endMs } = token;
    const word = (token.kind ?? "word") === "word";
    const valid = Number.isSafeInteger(startMs) && Number.isSafeInteger(endMs) && startMs >= 0 && endMs >= startMs;
    // The times only, never the words: the message is logged.
    if (!valid || (word && startMs < previousStart)) throw new ProviderError("fail", `${source}: malformed answer (token ${i} timed ${startMs}..${endMs} ms)`);
    if (word) previousStart = startMs;
  });
}

/** `source` names the answer in the error a malformed one throws ("elevenlabs speech-to-text"). */
export function segmentTokens(tokens: readonly TimedToken[], source = "transcriber"): TranscriptSegment[] {
  checkTimes(tokens, source);
  const segments: TranscriptSegment[] = [];
  // Provider labels (`spk_1`, `speaker_3`) become speaker_0, speaker_1, ... in order of first appearance.
  const speakers = new Map<string, string>();
  const speakerOf = (label: string | undefined) => {
    if (label === undefined) return undefined;
    if (!speakers.has(label)) speakers.set(label, `speaker_${speakers.size}`);
    return speakers.get(label);
  };
  let open: OpenSegment | undefined;
  /** Sounds heard while no segment is open, for the next one (or the last, after every word). */
  let waiting: TranscriptEvent[] = [];
  /** What punctuation arriving now joins: the segment and word of the last text token, when it was a timed word. */
  let last: { segment: { text: string }; word?: TranscriptWord } | undefined;

  const close = () => {
    if (!open) return;
    const text = open.text.trim();
    if (text && open.startMs !== undefined && open.endMs !== undefined) {
      const segment: TranscriptSegment = {
        startMs: open.startMs,
        endMs: open.endMs,
        text,
        ...(open.speaker !== undefined && { speaker: open.speaker }),
        ...(open.words.length > 0 && { words: open.words }),
        ...(open.events.length > 0 && { events: open.events }),
      };
      segments.push(segment);
      if (last?.segment === open) last.segment = segment;
    } else {
      waiting.push(...open.events);
    }
    open = undefined;
  };

  for (const token of tokens) {
    const timed = token.startMs !== undefined && token.endMs !== undefined;
    if (token.kind === "event") {
      if (!timed) continue;
      const event = { text: token.text, startMs: token.startMs!, endMs: token.endMs! };
      // Between two segments, a sound goes with the words after it, as the provider writes "(laughs) I'm fine".
      (open?.events ?? waiting).push(event);
      continue;
    }
    if (token.kind === "punctuation") {
      // Even after a sentence end closed its segment ("?" then "!"), punctuation stays with the word before it.
      if (last) {
        last.segment.text += token.before + token.text;
        if (last.word) last.word.text += token.before + token.text;
      }
      if (sentenceEnd.test(token.text)) close();
      continue;
    }
    const speaker = speakerOf(token.speaker);
    if (open && open.startMs !== undefined && open.endMs !== undefined) {
      // A long segment is cut before the next timed word, never between a word and its punctuation; another
      // speaker's word cuts it even untimed, or the segment would carry words under the wrong speaker.
      if (timed && open.endMs - open.startMs >= segmentSeconds * 1000) close();
      else if (speaker !== undefined && open.speaker !== undefined && speaker !== open.speaker) close();
    }
    if (!open) {
      open = { text: "", words: [], events: waiting };
      waiting = [];
    }
    open.text += open.text ? token.before + token.text : token.text;
    open.speaker ??= speaker;
    if (timed) {
      const word: TranscriptWord = {
        text: token.text,
        startMs: token.startMs!,
        endMs: token.endMs!,
        ...(token.confidence !== undefined && { confidence: thousandths(token.confidence) }),
      };
      open.words.push(word);
      open.startMs ??= token.startMs;
      open.endMs = Math.max(open.endMs ?? 0, token.endMs!);
    }
    last = { segment: open, word: timed ? open.words.at(-1) : undefined };
    if (sentenceEnd.test(token.text)) close();
  }
  close();
  if (waiting.length > 0 && segments.length > 0) (segments.at(-1)!.events ??= []).push(...waiting);
  return segments;
}

const thousandths = (confidence: number) => Math.round(Math.min(1, Math.max(0, confidence)) * 1000);
