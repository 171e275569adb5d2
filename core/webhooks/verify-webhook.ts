/**
 * For tenant developers: verifies a webhook from this service (copy this file; it needs only node:crypto).
 * Give it the raw request body exactly as received (before any JSON parsing), the headers and your secret.
 * It checks the Standard Webhooks signature (`webhook-signature: v1,<base64>` over "<id>.<timestamp>.<body>") where
 * it is sent, as it is in every delivery, else `X-Svc-Signature` (over "<timestamp>.<body>"), with a constant-time
 * comparison and a ±5 minute window on the timestamp. The Standard form signs the event id, so a delivery replayed
 * under another `X-Svc-Event-Id` is refused. Then dedupe on the returned `eventId` (keep the ids you processed for at
 * least the window), and for each (postId, stage) let the latest `occurredAt` win: a second `ready` after a
 * recompute is a new event.
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
  const standard = header("webhook-signature");
  const svcSignature = header("x-svc-signature");
  const timestamp = header(standard ? "webhook-timestamp" : "x-svc-timestamp");
  const eventId = header(standard ? "webhook-id" : "x-svc-event-id");
  if (!(standard ?? svcSignature) || !timestamp || !eventId) throw new WebhookVerificationError("missing signature headers");
  const svcEventId = header("x-svc-event-id");
  if (standard && svcEventId !== undefined && svcEventId !== eventId) throw new WebhookVerificationError("X-Svc-Event-Id is not the signed webhook-id");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("malformed timestamp");
  if (Math.abs(nowSeconds - Number(timestamp)) > webhookToleranceSeconds) throw new WebhookVerificationError("timestamp outside the tolerance window");
  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody);
  const same = (given: Buffer, expected: Buffer) => given.length === expected.length && timingSafeEqual(given, expected);
  const valid = standard
    ? standard.split(" ").some((entry) => {
        if (!entry.startsWith("v1,")) return false;
        // As text: Buffer's base64 decoder skips characters it does not know, so decoded bytes would match a
        // signature with anything appended to it.
        const expected = createHmac("sha256", secret).update(`${eventId}.${timestamp}.`).update(body).digest("base64");
        return same(Buffer.from(entry.slice(3), "utf8"), Buffer.from(expected, "utf8"));
      })
    : same(Buffer.from(svcSignature!, "utf8"), Buffer.from(`sha256=${createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")}`, "utf8"));
  if (!valid) throw new WebhookVerificationError("signature mismatch");
  let payload: VerifiedWebhook["payload"];
  try {
    payload = JSON.parse(body.toString("utf8")) as VerifiedWebhook["payload"];
  } catch {
    // Signed, yet not an event this service sends: refused like any other, as the client's verifier does.
    throw new WebhookVerificationError("the signed body is not JSON");
  }
  return { eventId, payload };
}
