/**
 * A transcript as the dev.svc.audio.transcript lexicon has it (its `#word`, `#event` and `#segment`, and the view
 * posts carry). test/openapi-lexicons.test.ts holds these to their lexicon defs, so a pass can check a provider's
 * transcript with them without bundling the lexicon library.
 */
import * as z from "zod";
import { languageTag } from "./post-schema";

const span = { startMs: z.number().int().min(0), endMs: z.number().int().min(0) };

const transcriptWordSchema = z
  .object({
    text: z.string().describe("The word, with the punctuation written after it."),
    ...span,
    confidence: z.number().int().min(0).max(1000).optional().describe("The provider's confidence in thousandths (987 is 0.987)."),
  })
  .meta({ id: "TranscriptWord", description: "A spoken word." });

const transcriptEventSchema = z
  .object({ text: z.string(), ...span })
  .meta({ id: "TranscriptEvent", description: "A sound that is not speech, such as (laughter), as the provider tags it: never a word." });

const transcriptSegmentSchema = z
  .object({
    ...span,
    text: z.string(),
    speaker: z.string().max(64).optional().describe("Who speaks, where the provider diarizes: speaker_0, speaker_1, ... in order of first appearance."),
    words: z
      .array(transcriptWordSchema)
      .optional()
      .describe("The timed words in order; each word's text occurs in the segment's text, in this order, so captions can be cut at any word."),
    events: z.array(transcriptEventSchema).optional().describe("Sounds that are not speech, where the provider tags them."),
  })
  .meta({
    id: "TranscriptSegment",
    description: "A timed span: it ends at a sentence end, where the speaker changes, or after about 12 seconds, and spans its words.",
  });

export const transcriptViewSchema = z.object({
  text: z.string(),
  lang: languageTag.optional().describe("The detected language as a BCP-47 tag, where the provider detects it."),
  segments: z.array(transcriptSegmentSchema).optional(),
}).meta({ id: "Transcript", description: "Lifted from the post's dev.svc.audio.transcript record at read time." });
