import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { listUndelivered, listUndeliveredQuerySchema, listUndeliveredSchema } from "../core/webhooks/undelivered-events";

export const route = defineRoute({
  file: "list-webhook-events",
  method: "GET",
  path: "/api/v1/system/webhook-events",
  summary: "A tenant's undelivered webhook events (still retrying, refused or given up), oldest first",
  auth: "system",
  rateLimit: null,
  uses: ["sql"],
  status: 200,
  query: listUndeliveredQuerySchema,
  response: listUndeliveredSchema,
  internal: true,
  errors: ["VALIDATION_ERROR", "UNAUTHORIZED", "SERVICE_UNAVAILABLE"],
});

/** The operator's list (docs/decisions.md#webhooks): what the outbox has not delivered for one tenant. */
const impl = implement(route, async (call) => ({ data: { items: await listUndelivered(call.sql, call.query.appId, call.query.limit) } }));

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql });
