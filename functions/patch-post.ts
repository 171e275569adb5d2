import { DomainError } from "../core/domain-error";
import { implement, type RouteCall } from "../core/http/route-call";
import { keyTakenOver } from "../core/idempotency/claim";
import { leaveToSweep } from "../core/processing/lease";
import { requestStagesIfAuthor } from "../core/processing/request-stages";
import { requestedStages } from "../core/processing/stage-state";
import { findPost } from "../core/posts/post-store";
import { toPostView } from "../core/posts/post-view";
import { projectionOf } from "../core/posts/projection";
import { JSON_BODY_LIMIT } from "../core/http/read-json-body";
import { defineRoute } from "../core/http/route";
import { postIdParamsSchema } from "../core/posts/list-query";
import { postViewSchema } from "../core/posts/post-view-schema";
import { patchPostBodySchema } from "../core/records/post-schema";
import { lambdaEnrichment } from "../core/runtime/lambda/lambda-enrichment";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";

export const route = defineRoute({
  file: "patch-post",
  method: "PATCH",
  path: "/api/v1/posts/{postId}",
  summary: "Request enrichment",
  description: "Request enrichment stages of the author's post (at least one stage true); answers 202 with the post view, whose `processing` says where each stage is.",
  auth: "actor",
  rateLimit: "write",
  uses: ["sql", "enrichment"],
  reads: ["playback"],
  status: 202,
  params: postIdParamsSchema,
  body: { kind: "json", schema: patchPostBodySchema, maxBytes: JSON_BODY_LIMIT },
  response: postViewSchema,
  idempotent: true,
  errors: ["VALIDATION_ERROR", "FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "IDEMPOTENCY_IN_PROGRESS", "IDEMPOTENCY_KEY_REUSED"],
});

/**
 * Only the author may request stages of a post with audio (docs/decisions.md#processing). The stages are decided and
 * written at once, `skipped` ones with their events; a pending stage is dispatched (inline: run) before answering.
 */
const impl = implement(route, async (call) => {
  const { postId } = call.params;
  const appId = call.tenant.appId;
  // Taken over from a PATCH under this key that wrote its stages and died before answering: answer, write nothing.
  if (!call.idempotency?.written) await requestStages(call);
  const row = await findPost(call.sql, appId, postId);
  if (!row) throw new DomainError("NOT_FOUND", "post not found");
  return { data: toPostView(row, projectionOf(call)) };
});

const requestStages = async (call: RouteCall<typeof route>): Promise<void> => {
  const { postId } = call.params;
  const appId = call.tenant.appId;
  const { enrichment } = call.deps;
  const result = await requestStagesIfAuthor(call.sql, {
    appId,
    rkey: postId,
    actor: call.actor,
    decisions: enrichment.plan(appId, requestedStages(call.body.processing), call.log),
    now: call.deps.now(),
    webhooks: enrichment.webhooks(appId),
    claim: call.idempotency,
  });
  if (result.claimLost) throw keyTakenOver();
  if (!result.post.found) throw new DomainError("NOT_FOUND", "post not found");
  if (result.post.author !== call.actor) throw new DomainError("FORBIDDEN", "only the author may request processing of a post");
  if (!result.post.hasAudio) {
    throw new DomainError("VALIDATION_ERROR", "the post has no audio to process", [{ path: ["params", "postId"], message: "post has no audio" }]);
  }
  try {
    await enrichment.afterRequest({ appId, postId }, result, call.log, call.requestId);
  } catch (error) {
    // The request is stored: its stages stay pending and the next sweep dispatches them, as after a create. A 503
    // would say it failed, and its retry could change nothing.
    call.log.error("processing job not dispatched; the sweep retries it", { appId, postId, error: String(error) });
    await leaveToSweep(call.sql, appId, postId, call.deps.now()).catch(() => undefined);
  }
};

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, enrichment: lambdaEnrichment });
