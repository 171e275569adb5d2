/**
 * Both signature schemes over the same raw body (docs/decisions.md#webhooks): the service's own
 * `X-Svc-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`, and the Standard Webhooks headers
 * `webhook-signature: v1,<base64 HMAC-SHA256(secret's UTF-8 bytes, "<id>.<timestamp>.<body>")>`.
 */
import { createHmac } from "node:crypto";

export const svcSignature = (secret: string, timestamp: number, body: string): string =>
  `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;

export const standardWebhookSignature = (secret: string, eventId: string, timestamp: number, body: string): string =>
  `v1,${createHmac("sha256", Buffer.from(secret, "utf8")).update(`${eventId}.${timestamp}.${body}`).digest("base64")}`;

/** The headers of one attempt; each attempt is signed afresh with its own timestamp (unix seconds). */
export const webhookHeaders = (secret: string, eventId: string, timestamp: number, body: string): Record<string, string> => ({
  "Content-Type": "application/json",
  "X-Svc-Signature": svcSignature(secret, timestamp, body),
  "X-Svc-Timestamp": String(timestamp),
  "X-Svc-Event-Id": eventId,
  "webhook-id": eventId,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": standardWebhookSignature(secret, eventId, timestamp, body),
});
