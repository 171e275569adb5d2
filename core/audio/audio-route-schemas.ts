/** Wire schemas of the audio routes, apart from the upload machinery so the route table stays light to bundle. */
import * as z from "zod";

/** Declares a direct-to-S3 upload; type and size rules are checked by `createUpload`, for their own error codes. */
export const createUploadBody = z.strictObject({
  mimeType: z.string().max(255),
  size: z.number().int().positive(),
});

export const createUploadResponseSchema = z.object({
  uploadId: z.string(),
  /** POST the fields, then the file last, as multipart/form-data to this URL. */
  url: z.string(),
  fields: z.record(z.string(), z.string()),
  expiresAt: z.string(),
});

export const uploadIdParamsSchema = z.strictObject({ uploadId: z.string() });

/**
 * GET /api/v1/audio. The route answers a request without `url` (400), `exp` or `sig` (403, checked first so an unsigned
 * caller learns nothing) and with another `format` (400) itself, so zod takes any of them. `x-required` tells the
 * OpenAPI generator to list a parameter as required all the same; the route lists the formats it serves.
 */
const requiredInDescription = { "x-required": true } as const;

export const playbackQuerySchema = z.strictObject({
  url: z.string().optional().meta(requiredInDescription),
  exp: z.string().optional().meta(requiredInDescription),
  sig: z.string().optional().meta(requiredInDescription),
  format: z.string().optional(),
});
