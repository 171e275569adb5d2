import type { components } from "./generated/openapi.js";

export type StageSettleEvent = components["schemas"]["StageSettleEvent"];
export type WebhookEvent = StageSettleEvent & { eventId: string };
/** Any object with Fetch's `get(name)` (the global Headers, or another library's), or a plain record such as Node's. */
export type WebhookHeaders = Pick<Headers, "get"> | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

export interface VerifyWebhookOptions {
  /** Allowed clock drift either way, in seconds. */
  toleranceSeconds?: number;
  /** Unix seconds now. */
  now?: () => number;
}

const encoder = new TextEncoder();

const headerOf = (headers: WebhookHeaders, name: string): string | undefined => {
  // By shape, not instanceof: a framework's own Headers class (undici's copy, node-fetch's) is not the global one.
  if (typeof headers.get === "function") return (headers as Pick<Headers, "get">).get(name) ?? undefined;
  const found = Object.entries(headers as Record<string, string | string[] | undefined>).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found[0] : found;
};

const fromHex = (hex: string): Uint8Array | null => (/^(?:[0-9a-f]{2})+$/i.test(hex) ? Uint8Array.from(hex.match(/../g)!, (byte) => parseInt(byte, 16)) : null);

// Only canonical base64, as the standardwebhooks library compares it: atob also takes missing padding and whitespace.
const fromBase64 = (text: string): Uint8Array | null => {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
};

const concat = (...parts: Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
};

/**
 * Verifies a stage-settle webhook and returns its event. Give it the raw body exactly as received (before any JSON
 * parsing), the request's headers and the tenant's webhook secret. It accepts the Standard Webhooks form
 * (`webhook-signature: v1,<base64>` over "<id>.<timestamp>.<body>", keyed by the secret's UTF-8 bytes) and the
 * service's own headers (`X-Svc-Signature: sha256=<hex>` over "<timestamp>.<body>"); throws WebhookVerificationError
 * on a missing, bad or stale signature. WebCrypto compares the signatures (constant time), so it runs wherever fetch
 * does. Then dedupe on `eventId`, and for each (postId, stage) let the latest `occurredAt` win.
 *
 * The Standard form is preferred whenever it is there, as in every delivery of the service: it signs the event id,
 * so a delivery replayed under another `X-Svc-Event-Id` is refused rather than taken for a new event. With the
 * service's headers alone the id is not signed.
 */
export const verifyWebhook = async (rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyWebhookOptions = {}): Promise<WebhookEvent> => {
  const svcSignature = headerOf(headers, "x-svc-signature");
  const standard = headerOf(headers, "webhook-signature");
  const scheme = standard !== undefined ? "standard" : "svc";
  const timestamp = scheme === "svc" ? headerOf(headers, "x-svc-timestamp") : headerOf(headers, "webhook-timestamp");
  const eventId = scheme === "svc" ? headerOf(headers, "x-svc-event-id") : headerOf(headers, "webhook-id");
  if ((standard ?? svcSignature) === undefined || timestamp === undefined || eventId === undefined) {
    throw new WebhookVerificationError("missing signature headers");
  }
  const svcEventId = headerOf(headers, "x-svc-event-id");
  if (scheme === "standard" && svcEventId !== undefined && svcEventId !== eventId) {
    throw new WebhookVerificationError("X-Svc-Event-Id is not the signed webhook-id");
  }
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("malformed timestamp");
  const now = options.now?.() ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError("timestamp outside the tolerance window");

  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const signed = scheme === "svc" ? concat(encoder.encode(`${timestamp}.`), body) : concat(encoder.encode(`${eventId}.${timestamp}.`), body);
  const candidates =
    scheme === "svc"
      ? [svcSignature!.startsWith("sha256=") ? fromHex(svcSignature!.slice("sha256=".length)) : null]
      : standard!.split(" ").map((entry) => (entry.startsWith("v1,") ? fromBase64(entry.slice(3)) : null));
  let valid = false;
  for (const signature of candidates) {
    if (signature && (await crypto.subtle.verify("HMAC", key, signature as Uint8Array<ArrayBuffer>, signed))) valid = true;
  }
  if (!valid) throw new WebhookVerificationError("signature mismatch");

  let payload: StageSettleEvent;
  try {
    payload = JSON.parse(new TextDecoder().decode(body)) as StageSettleEvent;
  } catch {
    throw new WebhookVerificationError("the signed body is not JSON");
  }
  return { eventId, ...payload };
};
