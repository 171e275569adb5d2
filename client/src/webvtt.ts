/** What captions need of a transcript (`embed.transcript`): timed segments, with words and speakers where known. */
export interface TimedTranscript {
  segments?: TimedSegment[];
}

export interface TimedSegment {
  startMs: number;
  endMs: number;
  text: string;
  speaker?: string;
  words?: { text: string; startMs: number; endMs: number }[];
}

export interface WebVTTOptions {
  /** A segment longer than this, with word timings, is cut at word boundaries. */
  maxCueMs?: number;
  /** Likewise for a segment of more characters (two lines of captions). */
  maxCueChars?: number;
}

interface Cue {
  startMs: number;
  endMs: number;
  text: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** HH:MM:SS.mmm */
export const vttTimestamp = (ms: number): string => {
  const t = Math.max(0, Math.round(ms));
  return `${pad(Math.floor(t / 3_600_000))}:${pad(Math.floor(t / 60_000) % 60)}:${pad(Math.floor(t / 1000) % 60)}.${pad(t % 1000, 3)}`;
};

/**
 * Cue text as WebVTT may hold it: `&`, `<` and `>` escaped (so `-->` cannot end the timing either), and every line
 * break one space, since a blank line ends the cue and a player would drop the rest (a transcript's segment can hold
 * paragraph breaks).
 */
const escapeCueText = (text: string) =>
  text.replace(/[ \t]*(?:\r\n|\r|\n)+[ \t]*/g, " ").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Where each word starts in the segment's text, so cut cues keep the text's own spacing and punctuation; null when a
 * word is not found in order (the cues then join the words with spaces). A word is looked for where a word begins
 * first (after a space, a dash, a quote), so an untimed word the words skip ("another") does not hide the next
 * ("other") inside it; in scripts without spaces between words, anywhere.
 */
const wordOffsets = (text: string, words: { text: string }[]): number[] | null => {
  const offsets: number[] = [];
  let from = 0;
  for (const word of words) {
    const at = wordStart(text, word.text, from);
    if (at < 0) return null;
    // A cue cut before the word takes the opening quotes and brackets it stands behind with it.
    let start = at;
    while (start > from && opening.test(text[start - 1]!)) start--;
    offsets.push(start);
    from = at + word.text.length;
  }
  return offsets;
};

/** A letter, a combining mark or a digit: what a word continues with, so anything else (a space, a dash, a quote) ends one. */
const wordCharacter = /[\p{L}\p{M}\p{N}]/u;

/** Opening punctuation (brackets, quotes, straight quotes too), which belongs to the word after it. */
const opening = /[\p{Ps}\p{Pi}"']/u;

const wordStart = (text: string, word: string, from: number): number => {
  const first = text.indexOf(word, from);
  for (let at = first; at >= 0; at = text.indexOf(word, at + 1)) if (at === 0 || !wordCharacter.test(text[at - 1]!)) return at;
  return first;
};

/** A segment's cues: itself when short, else runs of its words, each within both limits (a single long word is alone). */
const cuesOf = (segment: TimedSegment, maxMs: number, maxChars: number): Cue[] => {
  const words = segment.words ?? [];
  const long = segment.endMs - segment.startMs > maxMs || segment.text.trim().length > maxChars;
  if (!long || words.length < 2) return [{ startMs: segment.startMs, endMs: segment.endMs, text: segment.text.trim() }];
  const groups: number[][] = [[]];
  let chars = 0;
  words.forEach((word, i) => {
    const group = groups.at(-1)!;
    const first = words[group[0] ?? i]!;
    if (group.length > 0 && (word.endMs - first.startMs > maxMs || chars + 1 + word.text.length > maxChars)) {
      groups.push([i]);
      chars = word.text.length;
    } else {
      group.push(i);
      chars += (group.length > 1 ? 1 : 0) + word.text.length;
    }
  });
  const offsets = wordOffsets(segment.text, words);
  return groups.map((group, g) => {
    const firstWord = group[0]!;
    const next = groups[g + 1]?.[0];
    const text = offsets
      ? // The first cue starts with the text: words without times (kept in the text, not among the words) lead no cue.
        segment.text.slice(g === 0 ? 0 : offsets[firstWord], next === undefined ? undefined : offsets[next]).trim()
      : group.map((i) => words[i]!.text).join(" ");
    return {
      startMs: g === 0 ? segment.startMs : words[firstWord]!.startMs,
      endMs: next === undefined ? segment.endMs : words[next]!.startMs,
      text,
    };
  });
};

/**
 * WebVTT captions of a transcript: "WEBVTT", then one cue per segment (HH:MM:SS.mmm), with the speaker as a voice
 * span where the transcript has one. A long segment with word timings becomes several cues cut at word boundaries.
 */
export const toWebVTT = (transcript: TimedTranscript | undefined, options: WebVTTOptions = {}): string => {
  const maxMs = options.maxCueMs ?? 7000;
  const maxChars = options.maxCueChars ?? 84;
  const cues: (Cue & { voice: string })[] = [];
  for (const segment of transcript?.segments ?? []) {
    const voice = segment.speaker ? `<v ${escapeCueText(segment.speaker)}>` : "";
    for (const cue of cuesOf(segment, maxMs, maxChars)) if (cue.text !== "") cues.push({ ...cue, voice });
  }
  // WebVTT wants no cue to start before an earlier one; a stable sort keeps the transcript's order among equal starts.
  cues.sort((a, b) => a.startMs - b.startMs);
  const blocks = cues.map((cue) => {
    // Clamped first, so a cue before 0 still lasts 1 ms rather than nothing.
    const startMs = Math.max(0, cue.startMs);
    const endMs = Math.max(cue.endMs, startMs + 1);
    return `${vttTimestamp(startMs)} --> ${vttTimestamp(endMs)}\n${cue.voice}${escapeCueText(cue.text)}`;
  });
  return `${["WEBVTT", ...blocks].join("\n\n")}\n`;
};
