import * as z from "zod";
import { postRecordSchema } from "../records/post-schema";

export const stageNames = ["denoise", "trim", "transcribe", "waveform"] as const;

export const viewerStateSchema = z.object({
  isAuthor: z.boolean(),
  canReply: z.boolean(),
  replyDisabledReason: z.enum(["unauthenticated", "not_a_participant"]).optional(),
});

export const transcriptViewSchema = z.object({
  text: z.string(),
  lang: z.string().optional(),
  segments: z.array(z.object({ startMs: z.number().int(), endMs: z.number().int(), text: z.string() })).optional(),
});

export const waveformSchema = z.object({
  version: z.literal(2),
  channels: z.number().int(),
  sample_rate: z.number().int(),
  samples_per_pixel: z.number().int(),
  bits: z.union([z.literal(8), z.literal(16)]),
  length: z.number().int(),
  data: z.array(z.number().int()),
});

export const audioEmbedViewSchema = z.object({
  $type: z.literal("dev.svc.embed.audio#view"),
  /** Signed, short-lived playback address back at this service. */
  url: z.url(),
  mimeType: z.string(),
  size: z.number().int(),
  durationMs: z.number().int().optional(),
  transcript: transcriptViewSchema.optional(),
  waveform: waveformSchema.optional(),
});

export const stageStateSchema = z.object({
  status: z.enum(["pending", "ready", "failed", "skipped"]),
  updatedAt: z.string(),
  reason: z.enum(["no_provider", "provider_misconfigured", "dispatch_off", "provider_error", "timeout", "dead_letter"]).optional(),
});

export const postViewSchema = z.object({
  uri: z.string(),
  cid: z.string(),
  kind: z.enum(["prompt", "reply"]),
  authorId: z.string(),
  authorDid: z.string().optional(),
  record: postRecordSchema,
  embed: audioEmbedViewSchema.optional(),
  /** Absent for a viewer-less (anonymous) read. */
  viewer: viewerStateSchema.optional(),
  processing: z.partialRecord(z.enum(stageNames), stageStateSchema).optional(),
});

export type PostView = z.infer<typeof postViewSchema>;

export const pageSchema = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });
