/** The rendition service's answers, checked before they become provider results: a malformed one is `fail`. */
import * as z from "zod";
import { isAcceptedMimeType } from "../../records/accepted-types";
import { isRawCid } from "../../blobs/raw-cid";
import { loudnessSchema } from "../../records/loudness";
import { type AudioRef, type NormalizedAudio, ProviderError, type Waveform } from "../provider-port";

const outputSchema = z.object({
  cid: z.string().refine(isRawCid),
  mimeType: z.string(),
  size: z.number().int().nonnegative(),
  durationMs: z.number().int().nonnegative(),
});

const waveformSchema = z.object({
  version: z.literal(2),
  channels: z.number().int().positive(),
  sample_rate: z.number().int().positive(),
  samples_per_pixel: z.number().int().positive(),
  bits: z.literal(8),
  length: z.number().int().nonnegative(),
  data: z.array(z.number().int().min(-128).max(127)),
});

/** A trim or denoise output: a variant in the same family as its input, under the same tenant. */
export function variantFrom(answer: unknown, input: AudioRef, operation: string): AudioRef {
  const parsed = outputSchema.safeParse(answer);
  if (!parsed.success || parsed.data.mimeType !== input.mimeType || !isAcceptedMimeType(parsed.data.mimeType)) {
    throw new ProviderError("fail", `rendition ${operation}: malformed answer`);
  }
  return { appId: input.appId, cid: parsed.data.cid, mimeType: input.mimeType, size: parsed.data.size, durationMs: parsed.data.durationMs };
}

/** A normalize output: the variant, and the loudness of it and of its input. */
export function normalizedFrom(answer: unknown, input: AudioRef): NormalizedAudio {
  const loudness = loudnessSchema.safeParse((answer as { loudness?: unknown } | null)?.loudness);
  if (!loudness.success) throw new ProviderError("fail", "rendition normalize: malformed answer");
  return { audio: variantFrom(answer, input, "normalize"), loudness: loudness.data };
}

export function renderedFrom(answer: unknown): z.infer<typeof outputSchema> {
  const parsed = outputSchema.safeParse(answer);
  if (!parsed.success || parsed.data.mimeType !== "audio/mpeg") throw new ProviderError("fail", "rendition render: malformed answer");
  return parsed.data;
}

export function waveformFrom(answer: unknown): Waveform {
  const parsed = waveformSchema.safeParse(answer);
  if (!parsed.success || parsed.data.data.length !== parsed.data.length * 2 * parsed.data.channels) {
    throw new ProviderError("fail", "rendition waveform: malformed answer");
  }
  return parsed.data;
}
