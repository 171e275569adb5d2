/**
 * One event to one tenant (docs/decisions.md#webhooks): up to 3 attempts, 5 s each, backoff about 0.5 s then 2 s.
 * Retried on network errors, timeouts, 408, 429 and 5xx; a 3xx is a failure never followed nor retried (a signed
 * payload is never resent elsewhere); other 4xx stop. Every attempt is logged with the event id and its outcome.
 * When every attempt failed in a way worth retrying, the result says so (`later`): the outbox tries again later.
 */
import type { WebhookTarget } from "../config/processing-config";
import { webhookHeaders } from "./sign-webhook";
import { webhookBody, type WebhookEvent } from "./webhook-event";
import type { Logger } from "../observability/logger";

export interface DeliveryOptions {
  timeoutMs: number;
  /** Waits before the second and third attempts. */
  backoffMs: readonly number[];
  now: () => Date;
}

export const deliveryDefaults: DeliveryOptions = { timeoutMs: 5000, backoffMs: [500, 2000], now: () => new Date() };

export type DeliveryOutcome = "delivered" | "failed";

/** `later`: the receiver could not be reached or was failing (not a refusal): worth another round from the outbox. */
export type DeliveryResult = { outcome: "delivered"; attempts: number } | { outcome: "failed"; attempts: number; later?: true };

const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

export const deliverWebhook = async (
  event: WebhookEvent,
  target: WebhookTarget,
  log: Pick<Logger, "info" | "warn">,
  options: DeliveryOptions = deliveryDefaults,
): Promise<DeliveryResult> => {
  const body = webhookBody(event);
  const attempts = options.backoffMs.length + 1;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const timestamp = Math.floor(options.now().getTime() / 1000);
    const context = { eventId: event.eventId, appId: event.appId, postId: event.postId, stage: event.stage, attempt };
    let retry: boolean;
    try {
      const res = await fetch(target.url, {
        method: "POST",
        headers: webhookHeaders(target.secret, event.eventId, timestamp, body),
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await res.body?.cancel();
      if (res.status >= 200 && res.status < 300) {
        log.info("webhook delivered", { ...context, status: res.status });
        return { outcome: "delivered", attempts: attempt };
      }
      retry = retryable(res.status);
      const why = res.status >= 300 && res.status < 400 ? "redirect not followed" : retry ? "retryable status" : "refused";
      log.warn("webhook attempt failed", { ...context, status: res.status, why });
    } catch (error) {
      retry = true;
      const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
      log.warn("webhook attempt failed", { ...context, why: timedOut ? "timeout" : "network error" });
    }
    if (!retry) return { outcome: "failed", attempts: attempt };
    if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, options.backoffMs[attempt - 1]));
  }
  return { outcome: "failed", attempts, later: true };
};
