/** Body of `POST /api/v1/audio/uploads`, apart so the route table does not pull the upload machinery into every bundle. */
import * as z from "zod";

/** Type and size limits are checked by `createUpload`, which answers them with their own error codes. */
export const createUploadBody = z.strictObject({
  mimeType: z.string().max(255),
  size: z.number().int().positive(),
});
