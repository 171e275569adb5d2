import type * as z from "zod";
import { stageSettleEventSchema } from "../webhooks/stage-settle-schema";

type Json = Record<string, unknown>;

const header = (name: string, description: string) => ({ name, in: "header", required: true, description, schema: { type: "string" } });

/** What a receiver gets when a post's transcript is ready. */
export const stageSettleExample = { postId: "3n3abwcd74ksb", originAppId: "demo", stage: "transcribe", status: "ready", occurredAt: "2026-11-26T18:18:32.248Z" };

/**
 * OpenAPI 3.1 `webhooks`: the one event, a stage settle, as the tenant's receiver gets it. Both signature schemes
 * are on every request (docs/decisions.md#webhooks).
 */
export const webhooksSection = (schemaOf: (schema: z.ZodType) => Json): Json => ({
  stageSettle: {
    post: {
      operationId: "stageSettle",
      summary: "Stage settled",
      description:
        "An enrichment stage settled (`ready`, `failed` or `skipped`). Sent to the tenant's SVC_APP_WEBHOOK_URLS entry, signed with its SVC_APP_WEBHOOK_SECRETS entry: a round of up to 3 attempts, 5 s each, redirects never followed; an event no round delivered (network errors, timeouts, 408, 429, 5xx) is sent again in later rounds under the same event id, backing off (by default from 30 s to an hour apart) for up to a day. Verify the signature over the raw body, allow 5 minutes of clock drift, dedupe on the event id, and reconcile from `GET /api/v1/posts/{postId}`.",
      parameters: [
        header("X-Svc-Signature", "`sha256=<hex HMAC-SHA256(secret, \"<timestamp>.<raw body>\")>`"),
        header("X-Svc-Timestamp", "Unix seconds; signed afresh on each attempt."),
        header("X-Svc-Event-Id", "UUID v4, the same on every attempt."),
        header("webhook-id", "Standard Webhooks: the event id."),
        header("webhook-timestamp", "Standard Webhooks: the same timestamp."),
        header("webhook-signature", "Standard Webhooks: `v1,<base64 HMAC-SHA256(secret's UTF-8 bytes, \"<id>.<timestamp>.<raw body>\")>`"),
      ],
      requestBody: {
        required: true,
        content: { "application/json": { schema: schemaOf(stageSettleEventSchema), example: stageSettleExample } },
      },
      responses: { "200": { description: "Received. Any 2xx ends delivery; 408, 429 and 5xx are retried; other answers are not." } },
    },
  },
});
