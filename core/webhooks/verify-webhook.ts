/**
 * For tenant developers: verifies a webhook from this service (copy this file; it needs only node:crypto).
 * Give it the raw request body exactly as received (before any JSON parsing), the headers and your secret.
 * It checks `X-Svc-Signature` with a constant-time comparison and a ±5 minute window on `X-Svc-Timestamp`.
 * Then dedupe on the returned `eventId` (keep the ids you processed for at least the window), and for each
 * (postId, stage) let the latest `occurredAt` win: a second `ready` after a recompute is a new event.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const webhookToleranceSeconds = 5 * 60;

export type VerifiedWebhook = {
  eventId: string;
  payload: { postId: string; originAppId: string; stage: string; status: "ready" | "failed" | "skipped"; occurredAt: string };
};

export class WebhookVerificationError extends Error {}

export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: Record<string, string | string[] | undefined>,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): VerifiedWebhook {
  // Header names in any case: Node lowercases them, other frameworks (API Gateway's REST events) keep them as sent.
  const header = (name: string) => {
    const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(value) ? value[0] : value;
  };
  const signature = header("x-svc-signature");
  const timestamp = header("x-svc-timestamp");
  const eventId = header("x-svc-event-id");
  if (!signature || !timestamp || !eventId) throw new WebhookVerificationError("missing signature headers");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("malformed timestamp");
  if (Math.abs(nowSeconds - Number(timestamp)) > webhookToleranceSeconds) throw new WebhookVerificationError("timestamp outside the tolerance window");
  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody);
  const expected = Buffer.from(
    `sha256=${createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")}`,
    "utf8",
  );
  const given = Buffer.from(signature, "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new WebhookVerificationError("signature mismatch");
  return { eventId, payload: JSON.parse(body.toString("utf8")) as VerifiedWebhook["payload"] };
}
