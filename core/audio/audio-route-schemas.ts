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

export const playbackQuerySchema = z.strictObject({
  url: z.string().optional(),
  exp: z.string().optional(),
  sig: z.string().optional(),
  format: z.string().optional(),
});
