import { isAtUriString, isValidLanguage } from "@atproto/syntax";
import { CID } from "multiformats/cid";
import * as z from "zod";
import { type AcceptedMimeType, acceptedMimeTypes as audioMimeTypes, maxUploadBytes as maxAudioBytes } from "./accepted-types";
import { nsids } from "./nsids";
import { stageOrder, type Stage } from "./stages";
import { graphemeLength, utf8Length } from "./text-length";

/**
 * Request and stored-record schemas of dev.svc.audio.post, agreeing with lexicons/ (see post-schema.test.ts).
 * Beyond the lexicon they reject unknown fields at every level, other embed types, empty blobs and posts
 * with neither text nor audio.
 */

function isCidString(value: string): boolean {
  try {
    CID.parse(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * "N characters" means N grapheme clusters, with the lexicon's byte cap of ten bytes per character. Refinements do
 * not reach the JSON Schema, so `.meta` states both limits as the lexicon does: `x-maxGraphemes`, and `maxLength`
 * (at most 10N UTF-8 bytes is at most 10N code points, so it refuses nothing the refinements take).
 */
const charLimitedString = (maxChars: number) =>
  z
    .string()
    .refine((s) => graphemeLength(s) <= maxChars, `must be at most ${maxChars} characters`)
    .refine((s) => utf8Length(s) <= maxChars * 10, `must be at most ${maxChars * 10} bytes of UTF-8`)
    .meta({
      description: `At most ${maxChars} characters (grapheme clusters) and ${maxChars * 10} UTF-8 bytes.`,
      maxLength: maxChars * 10,
      "x-maxGraphemes": maxChars,
    });

// The lexicon formats, which refinements cannot carry into the JSON Schema.
const cidString = z.string().max(128).refine(isCidString, "must be a CID").meta({ format: "cid" });

export const languageTag = z.string().max(35).refine(isValidLanguage, "must be a BCP-47 language tag").meta({ format: "language" });

const createdAtString = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, "must be ISO 8601 UTC with milliseconds")
  .refine((s) => !Number.isNaN(Date.parse(s)) && new Date(s).toISOString() === s, "must be a real date and time")
  .meta({ format: "date-time" });

export const blobRefSchema = z.strictObject({
  $type: z.literal("blob"),
  ref: z.strictObject({ $link: cidString }),
  mimeType: z.enum(audioMimeTypes as [AcceptedMimeType, ...AcceptedMimeType[]]),
  size: z.number().int().min(1).max(maxAudioBytes),
}).meta({ id: "BlobRef", description: "A blob reference as upload returns it; place it verbatim in `embed.audio`." });

export const strongRefSchema = z.strictObject({
  uri: z.string().max(512).refine((s) => isAtUriString(s), "must be an at:// URI").meta({ format: "at-uri" }),
  cid: cidString,
}).meta({ id: "StrongRef" });

export const audioEmbedSchema = z.strictObject({
  $type: z.literal(nsids.embedAudio),
  audio: blobRefSchema,
});

export const processingRequestSchema = z.strictObject(
  Object.fromEntries(stageOrder.map((stage) => [stage, z.boolean().optional()])) as Record<Stage, z.ZodOptional<z.ZodBoolean>>,
).meta({ id: "ProcessingRequest", description: "Opt-in to enrichment stages." });

/** PATCH /api/v1/posts/{postId}: `{ processing }` only, with at least one stage true. */
export const patchPostBodySchema = z.strictObject({
  processing: processingRequestSchema.refine((p) => Object.values(p).some((v) => v === true), "at least one stage must be true"),
});

export const replyRefSchema = z.strictObject({ root: strongRefSchema, parent: strongRefSchema });

const optionalFields = {
  embed: audioEmbedSchema.optional(),
  reply: replyRefSchema.optional(),
  langs: z.array(languageTag).max(3).optional(),
  selfLabels: z.array(charLimitedString(128)).max(10).optional(),
  processing: processingRequestSchema.optional(),
};

const textSchema = charLimitedString(3000);

const hasTextOrAudio = (post: { text: string; embed?: unknown }) => post.text.trim() !== "" || post.embed !== undefined;
const textOrAudio = { message: "a post needs non-empty text or an audio embed", path: ["text"] };

export const createPostBodySchema = z
  .strictObject({ text: textSchema, ...optionalFields })
  .refine(hasTextOrAudio, textOrAudio);

export const postRecordSchema = z
  .strictObject({ $type: z.literal(nsids.post), text: textSchema, createdAt: createdAtString, ...optionalFields })
  .refine(hasTextOrAudio, textOrAudio)
  .meta({ id: "PostRecord", description: "The stored dev.svc.audio.post record, exactly as its `cid` is computed." });

export type BlobRef = z.infer<typeof blobRefSchema>;
export type StrongRef = z.infer<typeof strongRefSchema>;
export type AudioEmbed = z.infer<typeof audioEmbedSchema>;
export type ProcessingRequest = z.infer<typeof processingRequestSchema>;
export type CreatePostBody = z.infer<typeof createPostBodySchema>;
export type PostRecord = z.infer<typeof postRecordSchema>;

/** The stored record: `$type`, `text`, `createdAt` (server time), then only the optional fields the body has. */
export function buildPostRecord(body: CreatePostBody, now: Date): PostRecord {
  const record: PostRecord = { $type: nsids.post, text: body.text, createdAt: now.toISOString() };
  if (body.embed !== undefined) record.embed = body.embed;
  if (body.reply !== undefined) record.reply = body.reply;
  if (body.langs !== undefined) record.langs = body.langs;
  if (body.selfLabels !== undefined) record.selfLabels = body.selfLabels;
  if (body.processing !== undefined) record.processing = body.processing;
  return record;
}
