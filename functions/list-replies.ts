import { listRepliesQuerySchema, postIdParamsSchema } from "../core/posts/list-query";
import { pageSchema, postViewSchema } from "../core/posts/post-view-schema";
import { defineRoute } from "../core/http/route";
import { DomainError } from "../core/domain-error";
import { implement } from "../core/http/route-call";
import { listPosts } from "../core/posts/post-store";
import { pageView } from "../core/posts/page-view";
import { projectionOf } from "../core/posts/projection";
import { postUri } from "../core/records/at-uri";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";

export const route = defineRoute({
  file: "list-replies",
  method: "GET",
  path: "/api/v1/posts/{postId}/replies",
  summary: "List replies",
  auth: "viewer",
  rateLimit: "read",
  uses: ["sql"],
  reads: ["playback"],
  status: 200,
  params: postIdParamsSchema,
  query: listRepliesQuerySchema,
  response: pageSchema(postViewSchema),
  errors: ["VALIDATION_ERROR", "NOT_FOUND"],
  description:
    "The direct replies of a post, oldest first. Each item's `embed.waveform` is an overview of at most 256 points, in the same BBC audiowaveform v2 format: `samples_per_pixel` is scaled by a whole factor so the overview spans the whole clip, each point the min of the mins and the max of the maxes it covers (a waveform of 256 points or fewer is as stored). `GET /api/v1/posts/{postId}` carries the full resolution (about 20 points a second).",
});

/** The thread under one post: its direct replies, oldest first. */
const impl = implement(route, async (call) => {
  const { postId } = call.params;
  const { cursor, limit } = call.query;
  const tenant = call.tenant;
  const list = { kind: "replies", parentUri: postUri(tenant.did, postId), parentRkey: postId } as const;
  const page = await listPosts(call.sql, tenant.appId, list, cursor, limit);
  if (!page.anchorFound) throw new DomainError("NOT_FOUND", "post not found");
  return { data: pageView(page, projectionOf(call)) };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql });
