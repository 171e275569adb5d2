/**
 * Amazon Transcribe's output JSON into a transcript: `results.transcripts[0].transcript` is the text;
 * `results.items[]` are pronunciations (the words) with `start_time`/`end_time` as strings (seconds), a confidence
 * and, with speaker labels asked for, a `speaker_label`, and punctuation with no times, which joins the word before
 * it. Where an item lacks its label, `results.speaker_labels.segments` says who spoke then. `results.language_code`
 * is the identified language.
 */
import * as z from "zod";
import { ProviderError, type TranscriptSegment } from "../provider-port";
import { segmentTokens, type TimedToken } from "../transcript-segments";

const seconds = z.string().regex(/^\d+(\.\d+)?$/);
const alternatives = z.array(z.object({ content: z.string(), confidence: z.string().optional() })).min(1);

const outputSchema = z.object({
  results: z.object({
    transcripts: z.array(z.object({ transcript: z.string() })).min(1),
    items: z.array(
      z.discriminatedUnion("type", [
        z.object({ type: z.literal("pronunciation"), start_time: seconds, end_time: seconds, alternatives, speaker_label: z.string().optional() }),
        z.object({ type: z.literal("punctuation"), alternatives }),
      ]),
    ),
    speaker_labels: z
      .object({
        segments: z.array(z.object({ speaker_label: z.string(), start_time: seconds, end_time: seconds })),
      })
      .optional(),
    language_code: z.string().optional(),
  }),
});

const ms = (s: string) => Math.round(Number(s) * 1000);

export function parseTranscribeOutput(json: unknown): { text: string; lang?: string; segments: TranscriptSegment[] } {
  const parsed = outputSchema.safeParse(json);
  if (!parsed.success) throw new ProviderError("fail", "aws-transcribe: malformed transcript output");
  const { transcripts, items, speaker_labels, language_code } = parsed.data.results;
  const turns = speaker_labels?.segments.map((s) => ({ speaker: s.speaker_label, startMs: ms(s.start_time), endMs: ms(s.end_time) })) ?? [];
  const speakerAt = (startMs: number) => turns.find((t) => t.startMs <= startMs && startMs < t.endMs)?.speaker;
  const tokens: TimedToken[] = items.map((item) => {
    const { content, confidence } = item.alternatives[0]!;
    if (item.type === "punctuation") return { kind: "punctuation", before: "", text: content };
    const startMs = ms(item.start_time);
    const speaker = item.speaker_label ?? speakerAt(startMs);
    const score = confidence === undefined ? NaN : Number(confidence);
    return {
      before: " ",
      text: content,
      startMs,
      endMs: ms(item.end_time),
      ...(speaker !== undefined && { speaker }),
      ...(Number.isFinite(score) && { confidence: score }),
    };
  });
  return { text: transcripts[0]!.transcript.trim(), ...(language_code && { lang: language_code }), segments: segmentTokens(tokens, "aws-transcribe transcript") };
}
