/**
 * The `elevenlabs` transcriber: `POST /v1/speech-to-text` with `xi-api-key`, multipart `file` and `model_id`
 * (default `scribe_v2`, word timestamps). The answer's `text`, `language_code` and `words[{ text, start, end, type }]`
 * become the transcript's text, `lang` and segments.
 */
import * as z from "zod";
import type { BlobStore } from "../../blobs/blob-store";
import { blobBytes } from "../blob-bytes";
import { ProviderError, type Transcriber } from "../provider-port";
import { providerFetch } from "../provider-http";
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
    .array(z.object({ text: z.string(), start: z.number().nullable().optional(), end: z.number().nullable().optional(), type: z.string() }))
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
      form.append("file", new Blob([new Uint8Array(await blobBytes(options.blobs, audio))], { type: audio.mimeType }), `${audio.cid}`);
      const response = await providerFetch(
        "elevenlabs speech-to-text",
        `${options.baseUrl}/v1/speech-to-text`,
        { method: "POST", headers: { "xi-api-key": options.apiKey }, body: form },
        call,
        options.fetch,
      );
      let parsed;
      try {
        parsed = answerSchema.safeParse(await response.json());
      } catch {
        parsed = undefined;
      }
      if (!parsed?.success) throw new ProviderError("fail", "elevenlabs speech-to-text: malformed answer");
      const { text, language_code: lang, words } = parsed.data;
      const tokens: TimedToken[] = [];
      let spacing = "";
      for (const w of words ?? []) {
        if (w.type === "spacing") spacing += w.text;
        else if (w.type === "word") {
          const timed = typeof w.start === "number" && typeof w.end === "number";
          tokens.push({ before: spacing, text: w.text, ...(timed && { startMs: Math.round(w.start! * 1000), endMs: Math.round(w.end! * 1000) }) });
          spacing = "";
        }
        // audio_event entries ("(laughter)") are not words: the segments leave them out.
      }
      const segments = segmentTokens(tokens);
      return { text: text.trim(), model, ...(lang && { lang }), ...(segments.length > 0 && { segments }) };
    },
  };
}
