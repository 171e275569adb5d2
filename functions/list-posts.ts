import { listPostsQuerySchema } from "../core/posts/list-query";
import { pageSchema, postViewSchema } from "../core/posts/post-view-schema";
import { defineRoute } from "../core/http/route";
import { DomainError } from "../core/domain-error";
import { implement } from "../core/http/route-call";
import { listPosts, type PostList } from "../core/posts/post-store";
import { pageView } from "../core/posts/page-view";
import { projectionOf } from "../core/posts/projection";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";

export const route = defineRoute({
  file: "list-posts",
  method: "GET",
  path: "/api/v1/posts",
  summary: "List posts",
  auth: "viewer",
  rateLimit: "read",
  uses: ["sql"],
  reads: ["playback"],
  status: 200,
  query: listPostsQuerySchema,
  response: pageSchema(postViewSchema),
  errors: ["VALIDATION_ERROR", "ACTING_ACTOR_REQUIRED"],
  description:
    "The viewer's own posts (`kind` narrows them to prompts or replies), or with `rootAuthor` the replies in threads that author started, newest first. Each item's `embed.waveform` is an overview of at most 256 points, in the same BBC audiowaveform v2 format: `samples_per_pixel` is scaled by a whole factor so the overview spans the whole clip, each point the min of the mins and the max of the maxes it covers (a waveform of 256 points or fewer is as stored). `GET /api/v1/posts/{postId}` carries the full resolution (about 20 points a second).",
});

/** Without `rootAuthor`: the viewer's own posts (needs the acting actor). With it: replies in that author's threads. */
const impl = implement(route, async (call) => {
  const { kind, rootAuthor, cursor, limit } = call.query;
  const { actor } = call;
  let list: PostList;
  if (rootAuthor !== undefined) list = { kind: "root-author", rootAuthorId: rootAuthor, postKind: kind };
  else if (actor !== undefined) list = { kind: "own", authorId: actor, postKind: kind };
  else throw new DomainError("ACTING_ACTOR_REQUIRED", "X-Svc-Acting-Actor is required to list your own posts");
  const page = await listPosts(call.sql, call.tenant.appId, list, cursor, limit);
  return { data: pageView(page, projectionOf(call)) };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql });
