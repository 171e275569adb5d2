import { configured } from "../core/config/parse-config";
import { playbackQuerySchema } from "../core/audio/audio-route-schemas";
import { defineRoute } from "../core/http/route";
import { playAudio } from "../core/audio/play-audio";
import { implement } from "../core/http/route-call";
import { lambdaRenditions } from "../core/runtime/lambda/lambda-renditions";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "get-audio",
  method: "GET",
  path: "/api/v1/audio",
  summary: "Play audio by signed capability URL (anonymous); ranges on the file store, a redirect on S3",
  auth: "anonymous",
  rateLimit: "read",
  uses: ["sql", "blobs", "renditions"],
  reads: ["playback"],
  status: 200,
  query: playbackQuerySchema,
  produces: "audio/*",
  head: true,
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
});

/** Anonymous playback by capability: only a signed, unexpired `blobs/` address resolves. */
const impl = implement(route, async (call) => ({
  raw: await playAudio({
    store: call.deps.blobs,
    sql: call.sql,
    secret: configured(call.deps.config.playbackSigningKey, "SVC_PLAYBACK_SIGNING_KEY"),
    query: call.req.query,
    method: call.req.method,
    range: call.req.headers.range,
    now: call.deps.now(),
    renditions: call.deps.renditions,
  }),
}));

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs, renditions: lambdaRenditions });
