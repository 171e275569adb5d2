import * as z from "zod";
import { loudnessSchema } from "../records/loudness";
import { postRecordSchema } from "../records/post-schema";
import { transcriptViewSchema } from "../records/transcript-schema";
import { stageOrder, type Stage } from "../records/stages";

export const viewerStateSchema = z.object({
  isAuthor: z.boolean(),
  canReply: z.boolean(),
  replyDisabledReason: z.enum(["unauthenticated", "not_a_participant"]).optional(),
}).meta({ id: "Viewer", description: "What the acting actor may do with the post; absent on a viewer-less read." });

// zod writes a numeric literal as `type: "number"`; the lexicon's are integers, so `.meta` says so.
export const waveformSchema = z.object({
  version: z.literal(2).meta({ type: "integer" }),
  channels: z.number().int().min(1),
  sample_rate: z.number().int().min(1),
  samples_per_pixel: z.number().int().min(1),
  bits: z.literal([8, 16]).meta({ type: "integer" }),
  length: z.number().int().min(0),
  data: z.array(z.number().int().min(-32768).max(32767)),
}).meta({ id: "Waveform", description: "BBC audiowaveform JSON v2: min and max pairs per pixel." });

export const audioEmbedViewSchema = z.object({
  $type: z.literal("dev.svc.embed.audio#view"),
  /** Signed, short-lived playback address back at this service. */
  url: z.url(),
  mimeType: z.string().max(128),
  size: z.number().int().min(0),
  durationMs: z.number().int().min(0).optional(),
  transcript: transcriptViewSchema.optional(),
  waveform: waveformSchema.optional(),
  loudness: loudnessSchema.optional(),
}).meta({ id: "AudioEmbedView", description: "The playable audio of a post: `url` is a signed, short-lived playback address." });

export const stageStateSchema = z.object({
  status: z.enum(["pending", "ready", "failed", "skipped"]),
  updatedAt: z.string(),
  reason: z.enum(["no_provider", "provider_misconfigured", "dispatch_off", "provider_error", "timeout", "dead_letter"]).optional(),
}).meta({ id: "StageState", description: "One stage's state; `reason` on `failed` and `skipped`." });

const stageStates = Object.fromEntries(stageOrder.map((stage) => [stage, stageStateSchema.optional()])) as {
  [S in Stage]: z.ZodOptional<typeof stageStateSchema>;
};

export const processingStateSchema = z
  .object(stageStates)
  .meta({ id: "ProcessingState", description: "Per-stage processing state, only stages ever requested: the authoritative record of enrichment." });

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
  processing: processingStateSchema.optional(),
}).meta({ id: "AudioPostView", description: "A post projected for the viewer." });

export type PostView = z.infer<typeof postViewSchema>;

export const pageSchema = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });
