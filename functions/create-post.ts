import * as z from "zod";
import { JSON_BODY_LIMIT } from "../core/http/read-json-body";
import { createPostBodySchema } from "../core/records/post-schema";
import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { createPost } from "../core/posts/create-post";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { lambdaEnrichment } from "../core/runtime/lambda/lambda-enrichment";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";

export const route = defineRoute({
  file: "create-post",
  method: "POST",
  path: "/api/v1/posts",
  summary: "Create a post",
  description: "A prompt, or a reply when `reply` is present (its `root` and `parent` name posts by the `uri` and `cid` of their views). Answers 201 with the new post's id.",
  auth: "actor",
  rateLimit: "write",
  uses: ["sql", "enrichment"],
  status: 201,
  body: { kind: "json", schema: createPostBodySchema, maxBytes: JSON_BODY_LIMIT },
  response: z.object({ postId: z.string() }),
  idempotent: true,
  errors: ["VALIDATION_ERROR", "NOT_A_PARTICIPANT", "PAYLOAD_TOO_LARGE", "IDEMPOTENCY_IN_PROGRESS", "IDEMPOTENCY_KEY_REUSED"],
});

const impl = implement(route, async (call) => ({
  data: await createPost({
    sql: call.sql,
    appId: call.tenant.appId,
    did: call.tenant.did,
    actor: call.actor,
    actorDid: call.actorDid,
    body: call.body,
    now: call.deps.now(),
    idempotency: call.idempotency,
    enrichment: call.deps.enrichment,
    log: call.log,
    requestId: call.requestId,
  }),
}));

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, enrichment: lambdaEnrichment });
