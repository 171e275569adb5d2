import * as z from "zod";
import { defineRoute } from "./http/route";
import { listPostsQuerySchema, listRepliesQuerySchema, postIdParamsSchema } from "./posts/list-query";
import { pageSchema, postViewSchema } from "./posts/post-view-schema";
import { blobRefSchema, createPostBodySchema } from "./records/post-schema";
import { healthSchema } from "./health/health-schema";
import { createUploadBody, createUploadResponseSchema, playbackQuerySchema, uploadIdParamsSchema } from "./audio/audio-route-schemas";

/** JSON write bodies are capped at 256 KiB (413 beyond). */
export const JSON_BODY_LIMIT = 262_144;

/**
 * The one route table. The Node host mounts it, `stacks/` makes one Lambda per entry, and the OpenAPI
 * description is generated from it. `file` names `functions/<file>.ts`.
 */
export const routes = {
  createPost: defineRoute({
    file: "create-post",
    method: "POST",
    path: "/api/v1/posts",
    summary: "Create a prompt, or a reply when `reply` is present",
    auth: "actor",
    rateLimit: "write",
    status: 201,
    body: { kind: "json", schema: createPostBodySchema, maxBytes: JSON_BODY_LIMIT },
    response: z.object({ postId: z.string() }),
    idempotent: true,
    errors: ["VALIDATION_ERROR", "NOT_A_PARTICIPANT", "PAYLOAD_TOO_LARGE", "IDEMPOTENCY_IN_PROGRESS", "IDEMPOTENCY_KEY_REUSED"],
  }),
  listPosts: defineRoute({
    file: "list-posts",
    method: "GET",
    path: "/api/v1/posts",
    summary: "The viewer's own posts, or with `rootAuthor` the replies in threads that author started",
    auth: "viewer",
    rateLimit: "read",
    status: 200,
    query: listPostsQuerySchema,
    response: pageSchema(postViewSchema),
    errors: ["VALIDATION_ERROR", "ACTING_ACTOR_REQUIRED"],
  }),
  getPost: defineRoute({
    file: "get-post",
    method: "GET",
    path: "/api/v1/posts/{postId}",
    summary: "One post, projected for the viewer (viewer-less without an acting actor)",
    auth: "viewer",
    rateLimit: "read",
    status: 200,
    params: postIdParamsSchema,
    response: postViewSchema,
    errors: ["NOT_FOUND"],
  }),
  listReplies: defineRoute({
    file: "list-replies",
    method: "GET",
    path: "/api/v1/posts/{postId}/replies",
    summary: "The direct replies of a post, oldest first",
    auth: "viewer",
    rateLimit: "read",
    status: 200,
    params: postIdParamsSchema,
    query: listRepliesQuerySchema,
    response: pageSchema(postViewSchema),
    errors: ["VALIDATION_ERROR", "NOT_FOUND"],
  }),
  uploadAudio: defineRoute({
    file: "upload-audio",
    method: "POST",
    path: "/api/v1/audio/upload",
    summary: "Upload audio (multipart/form-data, one field `file`, at most 25 MiB); stored by content address",
    auth: "actor",
    rateLimit: "upload",
    status: 201,
    body: { kind: "multipart" },
    response: z.object({ blob: blobRefSchema }),
    errors: ["VALIDATION_ERROR", "UNSUPPORTED_MEDIA_TYPE", "FILE_TOO_LARGE"],
  }),
  createUpload: defineRoute({
    file: "create-upload",
    method: "POST",
    path: "/api/v1/audio/uploads",
    summary: "Start a direct-to-S3 upload: a presigned POST for the declared type and size (S3 deployments only)",
    auth: "actor",
    rateLimit: "upload",
    status: 201,
    body: { kind: "json", schema: createUploadBody, maxBytes: JSON_BODY_LIMIT },
    response: createUploadResponseSchema,
    errors: ["VALIDATION_ERROR", "UNSUPPORTED_MEDIA_TYPE", "FILE_TOO_LARGE", "NOT_FOUND"],
  }),
  completeUpload: defineRoute({
    file: "complete-upload",
    method: "POST",
    path: "/api/v1/audio/uploads/{uploadId}/complete",
    summary: "Finish a direct-to-S3 upload: hash, sniff and store the object by content address",
    auth: "actor",
    rateLimit: "upload",
    status: 201,
    params: uploadIdParamsSchema,
    response: z.object({ blob: blobRefSchema }),
    errors: ["VALIDATION_ERROR", "UNSUPPORTED_MEDIA_TYPE", "FILE_TOO_LARGE", "NOT_FOUND"],
  }),
  getAudio: defineRoute({
    file: "get-audio",
    method: "GET",
    path: "/api/v1/audio",
    summary: "Play audio by signed capability URL (anonymous); ranges on the file store, a redirect on S3",
    auth: "anonymous",
    rateLimit: "read",
    status: 200,
    query: playbackQuerySchema,
    produces: "audio/*",
    head: true,
    errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND"],
  }),
  health: defineRoute({
    file: "health",
    method: "GET",
    path: "/health",
    summary: "Process and store health; judge readiness by backend, records and blobs",
    auth: "public",
    rateLimit: null,
    status: 200,
    response: healthSchema,
  }),
  openapi: defineRoute({
    file: "openapi",
    method: "GET",
    path: "/openapi.json",
    summary: "This OpenAPI 3.1 description",
    auth: "public",
    rateLimit: null,
    status: 200,
    produces: "application/json",
  }),
  reference: defineRoute({
    file: "reference",
    method: "GET",
    path: "/api/reference",
    summary: "Per-endpoint reference generated from the OpenAPI description",
    auth: "public",
    rateLimit: null,
    status: 200,
    produces: "text/html",
  }),
  referenceScript: defineRoute({
    file: "reference-script",
    method: "GET",
    path: "/api/reference/standalone.js",
    summary: "The reference page's script, served locally (no CDN)",
    auth: "public",
    rateLimit: null,
    status: 200,
    produces: "text/javascript",
    internal: true,
  }),
} as const;

export type Routes = typeof routes;
export const routeList = Object.values(routes);
