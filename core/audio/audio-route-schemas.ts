import * as z from "zod";

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
