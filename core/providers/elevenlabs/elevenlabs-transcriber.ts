/**
 * The `elevenlabs` transcriber: `POST /v1/speech-to-text` with `xi-api-key`, multipart `file` and `model_id`
 * (default `scribe_v2`), asking for word timestamps and diarization. The answer's `text` is the transcript's text,
 * its ISO 639-3 `language_code` becomes a BCP-47 `lang`, and its `words` (entries of `type` word, spacing or
 * audio_event, each with `speaker_id` and `logprob`) become segments with words, speakers and events.
 */
import * as z from "zod";
import type { BlobStore } from "../../blobs/blob-store";
import { blobBytes } from "../blob-bytes";
import { ProviderError, type Transcriber } from "../provider-port";
import { providerFetch, readJson } from "../provider-http";
import { languageTag } from "../language-tag";
import { segmentTokens, type TimedToken } from "../transcript-segments";

export const elevenLabsDefaultBaseUrl = "https://api.elevenlabs.io";
export const elevenLabsDefaultSttModel = "scribe_v2";

export interface ElevenLabsOptions {
  /** ELEVENLABS_BASE_URL, no trailing slash. */
  baseUrl: string;
  /** ELEVENLABS_API_KEY */
  apiKey: string;
  blobs: BlobStore;
  fetch?: typeof fetch;
}

const answerSchema = z.object({
  text: z.string(),
  language_code: z.string().optional().nullable(),
  words: z
    .array(
      z.object({
        text: z.string(),
        start: z.number().nullable().optional(),
        end: z.number().nullable().optional(),
        type: z.string(),
        speaker_id: z.string().nullable().optional(),
        logprob: z.number().nullable().optional(),
      }),
    )
    .optional()
    .nullable(),
});

export function createElevenLabsTranscriber(options: ElevenLabsOptions & { model?: string }): Transcriber {
  const model = options.model ?? elevenLabsDefaultSttModel;
  return {
    name: "elevenlabs",
    model,
    async transcribe(audio, call) {
      const form = new FormData();
      form.append("model_id", model);
      form.append("timestamps_granularity", "word");
      form.append("diarize", "true");
      form.append("file", new Blob([new Uint8Array(await blobBytes(options.blobs, audio))], { type: audio.mimeType }), `${audio.cid}`);
      const response = await providerFetch(
        "elevenlabs speech-to-text",
        `${options.baseUrl}/v1/speech-to-text`,
        { method: "POST", headers: { "xi-api-key": options.apiKey }, body: form },
        call,
        options.fetch,
      );
      const parsed = answerSchema.safeParse(await readJson("elevenlabs speech-to-text", response, call));
      if (!parsed.success) throw new ProviderError("fail", "elevenlabs speech-to-text: malformed answer");
      const { text, language_code, words } = parsed.data;
      const segments = segmentTokens(tokensOf(words ?? []), "elevenlabs speech-to-text");
      const lang = languageTag(language_code);
      return { text: text.trim(), model, ...(lang && { lang }), ...(segments.length > 0 && { segments }) };
    },
  };
}

type AnswerWord = NonNullable<z.infer<typeof answerSchema>["words"]>[number];

/** Spacing entries are the separators between words, not words; audio_event entries ("(laughter)") are events. */
function tokensOf(words: readonly AnswerWord[]): TimedToken[] {
  const tokens: TimedToken[] = [];
  let spacing = "";
  let afterEvent = false;
  for (const w of words) {
    if (w.type === "spacing") {
      // The spaces on either side of an event would double: the words around it keep one separator.
      if (!(afterEvent && spacing)) spacing += w.text;
      continue;
    }
    if (w.type !== "word" && w.type !== "audio_event") continue;
    const timed = typeof w.start === "number" && typeof w.end === "number";
    const token: TimedToken = {
      kind: w.type === "word" ? "word" : "event",
      before: spacing,
      text: w.text,
      ...(timed && { startMs: Math.round(w.start! * 1000), endMs: Math.round(w.end! * 1000) }),
      ...(w.speaker_id && { speaker: w.speaker_id }),
      // logprob is the natural log of the word's probability.
      ...(typeof w.logprob === "number" && { confidence: Math.exp(w.logprob) }),
    };
    tokens.push(token);
    if (token.kind === "word") {
      spacing = "";
      afterEvent = false;
    } else afterEvent = true;
  }
  return tokens;
}
