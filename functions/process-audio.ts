import * as z from "zod";
import { DomainError } from "../core/domain-error";
import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { jobSchema } from "../core/processing/job";
import { nextStep, retryDelaySeconds, retryPolicy } from "../core/processing/retry-policy";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { lambdaWorker } from "../core/runtime/lambda/lambda-worker";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "process-audio",
  method: "POST",
  path: "/api/v1/system/process-audio",
  summary: "Run a processing pass for a post (task-queue worker URL); 503 asks the caller to retry (a lease held, a store down)",
  auth: "system",
  rateLimit: null,
  uses: ["sql", "blobs", "worker"],
  status: 200,
  body: { kind: "json", schema: jobSchema, maxBytes: 4096 },
  response: z.object({ ran: z.boolean() }),
  internal: true,
  runsAPass: true,
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "SERVICE_UNAVAILABLE"],
});

/**
 * Cloud Tasks numbers its attempts (`X-CloudTasks-TaskRetryCount`, 0 on the first); any other caller's is a first.
 * An unparseable count is read as a first attempt too: the only cost is one more retry.
 */
const attemptOf = (headers: Readonly<Record<string, string | undefined>>): number => {
  const retries = Number(headers["x-cloudtasks-taskretrycount"]);
  return Number.isInteger(retries) && retries >= 0 ? retries + 1 : 1;
};

/**
 * The task queue's worker URL (docs/decisions.md#dispatch-and-the-worker): runs one job. 200 `{ ran }` when it ran
 * or had nothing to do; 503 when the caller must retry (another pass holds the post's lease, a provider asked to
 * retry, a store is down), under the one retry policy: on the last attempt a provider's retry settles the stage failed.
 */
const impl = implement(route, async (call) => {
  // The pass runs inside this request: its lines carry the request's id (docs/decisions.md#envelope-and-errors).
  const attempt = { attempt: attemptOf(call.req.headers), maxAttempts: retryPolicy.maxAttempts, requestId: call.requestId };
  const outcome = await call.deps.worker.runJob(call.body, attempt);
  const step = nextStep(outcome);
  if (step !== "done") {
    // Cloud Tasks considers a 503's Retry-After: the policy's wait, or the provider's when that is longer.
    call.responseHeaders["Retry-After"] = String(retryDelaySeconds(attempt.attempt, step));
    throw new DomainError("SERVICE_UNAVAILABLE", "processing must be retried later");
  }
  return { data: { ran: outcome.kind === "done" && outcome.ran } };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs, worker: lambdaWorker });
