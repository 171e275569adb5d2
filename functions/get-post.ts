import { postIdParamsSchema } from "../core/posts/list-query";
import { postViewSchema } from "../core/posts/post-view-schema";
import { defineRoute } from "../core/http/route";
import { DomainError } from "../core/domain-error";
import { implement } from "../core/http/route-call";
import { findPost } from "../core/posts/post-store";
import { toPostView } from "../core/posts/post-view";
import { projectionOf } from "../core/posts/projection";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";

export const route = defineRoute({
  file: "get-post",
  method: "GET",
  path: "/api/v1/posts/{postId}",
  summary: "Get a post",
  auth: "viewer",
  rateLimit: "read",
  uses: ["sql"],
  reads: ["playback"],
  status: 200,
  params: postIdParamsSchema,
  response: postViewSchema,
  errors: ["NOT_FOUND"],
  description: "One post, projected for the viewer (viewer-less, with no `viewer` object, without an acting actor). `embed.waveform` is at full resolution (BBC audiowaveform v2, about 20 points a second); list items carry an overview of at most 256 points.",
});

const impl = implement(route, async (call) => {
  const { postId } = call.params;
  const row = await findPost(call.sql, call.tenant.appId, postId);
  if (!row) throw new DomainError("NOT_FOUND", "post not found");
  return { data: toPostView(row, projectionOf(call)) };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql });
