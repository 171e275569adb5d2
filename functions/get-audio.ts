import * as z from "zod";
import { configured } from "../core/config/parse-config";
import { playbackQuerySchema } from "../core/audio/audio-route-schemas";
import { defineRoute } from "../core/http/route";
import { playAudio, playbackFormats } from "../core/audio/play-audio";
import { implement } from "../core/http/route-call";
import { lambdaRenditions } from "../core/runtime/lambda/lambda-renditions";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "get-audio",
  method: "GET",
  path: "/api/v1/audio",
  summary: "Play audio",
  auth: "anonymous",
  rateLimit: "read",
  uses: ["sql", "blobs", "renditions"],
  reads: ["playback"],
  status: 200,
  // playAudio refuses another `format` with its own 400 (after the signature), so zod takes any; the description lists them.
  query: playbackQuerySchema.extend({ format: z.string().optional().meta({ enum: [...playbackFormats] }) }),
  produces: "audio/*",
  head: true,
  otherResponses: {
    206: "Partial content: one byte range (file store)",
    302: "Redirect to a presigned GET that expires with the signature (S3 store)",
    304: "Not modified: If-None-Match names the ETag",
    416: "Range not satisfiable: the Range starts past the end (file store); `Content-Range: bytes */<size>`, no body",
  },
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
  description:
    "By signed capability URL, anonymous: byte ranges on the file store, a redirect on S3. Play the `embed.url` of a post view as it is. Its `exp` is now + 3600 s rounded up to the next multiple of 900 s, so every read of the same blob within one 15-minute window gets the identical URL; an `exp` more than 3600 + 900 s ahead is refused. Answers carry `Cache-Control: private, max-age=<seconds until exp>` and `ETag: \"<cid>\"` (`\"<cid>.mp3\"` for `format=mp3`); `If-None-Match` naming it is a 304. `format=mp3` with no rendition and no rendition service configured is 404 `NOT_FOUND`.",
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
    ifNoneMatch: call.req.headers["if-none-match"],
    ifRange: call.req.headers["if-range"],
    now: call.deps.now(),
    renditions: call.deps.renditions,
  }),
}));

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs, renditions: lambdaRenditions });
