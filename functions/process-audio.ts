import { DomainError } from "../core/domain-error";
import { implement } from "../core/http/route-call";
import { runPass } from "../core/processing/run-pass";
import * as z from "zod";
import { defineRoute } from "../core/http/route";
import { jobSchema } from "../core/processing/parse-job";
import { lambdaEnrichment } from "../core/runtime/lambda/lambda-enrichment";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "process-audio",
  method: "POST",
  path: "/api/v1/system/process-audio",
  summary: "Run a processing pass for a post (task-queue worker URL); 503 asks the caller to retry",
  auth: "system",
  rateLimit: null,
  uses: ["sql", "blobs", "enrichment"],
  status: 200,
  body: { kind: "json", schema: jobSchema, maxBytes: 4096 },
  response: z.object({ ran: z.boolean() }),
  internal: true,
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "SERVICE_UNAVAILABLE"],
});

/**
 * The task queue's worker URL (docs/decisions.md#dispatch-and-the-worker): runs one pass. 200 `{ ran }` when it ran or had nothing
 * to do; 503 when the caller must retry (another pass holds the lease, a provider asked to retry, a store is down).
 */
const impl = implement(route, async (call) => {
  const { pass } = call.deps.enrichment;
  const outcome = await runPass({ ...pass, sql: call.sql, log: call.log }, call.body);
  if (outcome.kind !== "done") throw new DomainError("SERVICE_UNAVAILABLE", "processing must be retried later");
  return { data: { ran: outcome.ran } };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs, enrichment: lambdaEnrichment });
