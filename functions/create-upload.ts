import { JSON_BODY_LIMIT } from "../core/http/read-json-body";
import { createUploadBody, createUploadResponseSchema } from "../core/audio/audio-route-schemas";
import { defineRoute } from "../core/http/route";
import { createUpload } from "../core/audio/presigned-upload";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "create-upload",
  method: "POST",
  path: "/api/v1/audio/uploads",
  summary: "Start a direct upload",
  description: "Start a direct-to-S3 upload: a presigned POST for the declared type and size (S3 deployments only; 404 on the file store). POST the bytes to `url` with every entry of `fields`, then complete the upload.",
  auth: "actor",
  rateLimit: "upload",
  uses: ["sql", "blobs"],
  status: 201,
  body: { kind: "json", schema: createUploadBody, maxBytes: JSON_BODY_LIMIT },
  response: createUploadResponseSchema,
  errors: ["VALIDATION_ERROR", "UNSUPPORTED_MEDIA_TYPE", "FILE_TOO_LARGE", "NOT_FOUND"],
});

/** Direct-to-S3 uploads, for files the gateway cannot carry; 404 on the file store. */
const impl = implement(route, async (call) => ({
  data: await createUpload({
    store: call.deps.blobs,
    sql: call.sql,
    appId: call.tenant.appId,
    actor: call.actor,
    mimeType: call.body.mimeType,
    size: call.body.size,
    now: call.deps.now(),
  }),
}));

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs });
