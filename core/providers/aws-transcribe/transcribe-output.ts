/**
 * Amazon Transcribe's output JSON into a transcript: `results.transcripts[0].transcript` is the text;
 * `results.items[]` are pronunciations with `start_time`/`end_time` as strings (seconds) and punctuation with no
 * times, which attaches to the word before it.
 */
import * as z from "zod";
import { ProviderError, type TranscriptSegment } from "../provider-port";
import { segmentTokens, type TimedToken } from "../transcript-segments";

const seconds = z.string().regex(/^\d+(\.\d+)?$/);

const outputSchema = z.object({
  results: z.object({
    transcripts: z.array(z.object({ transcript: z.string() })).min(1),
    items: z.array(
      z.discriminatedUnion("type", [
        z.object({ type: z.literal("pronunciation"), start_time: seconds, end_time: seconds, alternatives: z.array(z.object({ content: z.string() })).min(1) }),
        z.object({ type: z.literal("punctuation"), alternatives: z.array(z.object({ content: z.string() })).min(1) }),
      ]),
    ),
    language_code: z.string().optional(),
  }),
});

export function parseTranscribeOutput(json: unknown): { text: string; lang?: string; segments: TranscriptSegment[] } {
  const parsed = outputSchema.safeParse(json);
  if (!parsed.success) throw new ProviderError("fail", "aws-transcribe: malformed transcript output");
  const { transcripts, items, language_code } = parsed.data.results;
  const tokens: TimedToken[] = items.map((item) =>
    item.type === "pronunciation"
      ? {
          before: " ",
          text: item.alternatives[0]!.content,
          startMs: Math.round(Number(item.start_time) * 1000),
          endMs: Math.round(Number(item.end_time) * 1000),
        }
      : { before: "", text: item.alternatives[0]!.content },
  );
  return { text: transcripts[0]!.transcript.trim(), ...(language_code && { lang: language_code }), segments: segmentTokens(tokens) };
}
