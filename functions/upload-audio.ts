import * as z from "zod";
import { blobRefSchema } from "../core/records/post-schema";
import { defineRoute } from "../core/http/route";
import { uploadAudio } from "../core/audio/upload-audio";
import { uploadCodeSamples, uploadDescription } from "../core/audio/upload-examples";
import { acceptedMimeTypes } from "../core/records/accepted-types";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "upload-audio",
  method: "POST",
  path: "/api/v1/audio/upload",
  summary: "Upload audio",
  auth: "actor",
  rateLimit: "upload",
  uses: ["sql", "blobs"],
  status: 201,
  body: { kind: "multipart", field: "file", partTypes: acceptedMimeTypes },
  response: z.object({ blob: blobRefSchema }),
  errors: ["VALIDATION_ERROR", "UNSUPPORTED_MEDIA_TYPE", "FILE_TOO_LARGE"],
  description: `Multipart/form-data, one field \`file\`, at most 25 MiB; stored by content address, and answered with the blob reference a post's \`embed.audio\` places verbatim. ${uploadDescription}`,
  codeSamples: uploadCodeSamples,
});

const impl = implement(route, async (call) => {
  const { blob } = await uploadAudio({ store: call.deps.blobs, sql: call.sql, appId: call.tenant.appId, request: call.req });
  return { data: { blob } };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs });
