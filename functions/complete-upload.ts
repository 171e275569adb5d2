import * as z from "zod";
import { uploadIdParamsSchema } from "../core/audio/audio-route-schemas";
import { blobRefSchema } from "../core/records/post-schema";
import { defineRoute } from "../core/http/route";
import { completeUpload } from "../core/audio/presigned-upload";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "complete-upload",
  method: "POST",
  path: "/api/v1/audio/uploads/{uploadId}/complete",
  summary: "Finish a direct upload",
  description: "Finish a direct-to-S3 upload: the object is hashed, sniffed and measured once, stored by content address, and answered as the blob reference a post's `embed.audio` places verbatim.",
  auth: "actor",
  // The upload was counted when it started (create-upload), as POST /api/v1/audio/upload counts once: finishing it
  // is limited as a read, so a client checking whether its bytes have landed cannot spend the upload budget.
  rateLimit: "read",
  uses: ["sql", "blobs"],
  status: 201,
  params: uploadIdParamsSchema,
  response: z.object({ blob: blobRefSchema }),
  errors: ["VALIDATION_ERROR", "UNSUPPORTED_MEDIA_TYPE", "FILE_TOO_LARGE", "NOT_FOUND"],
});

const impl = implement(route, async (call) => {
  const { blob } = await completeUpload({
    store: call.deps.blobs,
    sql: call.sql,
    appId: call.tenant.appId,
    actor: call.actor,
    uploadId: call.params.uploadId,
    now: call.deps.now(),
    log: call.log,
  });
  return { data: { blob } };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs });
