import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { redeliver, redeliverBodySchema, redeliveredSchema } from "../core/webhooks/undelivered-events";

export const route = defineRoute({
  file: "redeliver-webhook-events",
  method: "POST",
  path: "/api/v1/system/webhook-events/redeliver",
  summary: "Send a tenant's undelivered webhook events again (all, or those named), under their original event ids",
  auth: "system",
  rateLimit: null,
  uses: ["sql"],
  status: 202,
  body: { kind: "json", schema: redeliverBodySchema, maxBytes: 64 * 1024 },
  response: redeliveredSchema,
  internal: true,
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "SERVICE_UNAVAILABLE"],
});

/**
 * Reopens the events (docs/decisions.md#webhooks): each is due at once with a fresh give-up age, and the next sweep
 * (`SVC_SWEEP_INTERVAL_MS` on a Node host, every five minutes on AWS) sends it; 202 with the ids reopened.
 */
const impl = implement(route, async (call) => {
  const eventIds = await redeliver(call.sql, call.body.appId, call.body.eventIds, call.deps.now());
  return { data: { redelivered: eventIds.length, eventIds } };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql });
