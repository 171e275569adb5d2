/**
 * Each webhook attempt is signed afresh with its own timestamp (docs/decisions.md#webhooks): a retry minutes after the first
 * attempt, or the outbox's delivery long after the settle, still verifies within a receiver's clock window. Time
 * is an injected clock; the client's verifyWebhook judges each request at the time it was sent.
 */
import type { IncomingHttpHeaders } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { deliverWebhook, deliveryDefaults } from "../../core/webhooks/deliver-webhook";
import { offDispatcher } from "../../core/processing/dispatcher";
import { runPass } from "../../core/processing/run-pass";
import { sweep } from "../../core/processing/sweep";
import { backends } from "../../test/support/databases";
import { quietLog, startEnrichmentHarness, webhookSecret, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { startWebhookReceiver, type ReceivedWebhook } from "../../test/support/webhook-receiver";
import { verifyWebhook, WebhookVerificationError } from "../src/index";

const seconds = (ms: number) => Math.floor(ms / 1000);
const only = (headers: IncomingHttpHeaders, prefix: string) => Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith(prefix)));

/** Verifies a delivery at `atMs` in both schemes: the Standard form (preferred when present) and X-Svc-* alone. */
const verifiesAt = async (hook: ReceivedWebhook, atMs: number) => {
  const now = () => seconds(atMs);
  await verifyWebhook(hook.body, hook.headers, webhookSecret, { now });
  await verifyWebhook(hook.body, only(hook.headers, "x-svc-"), webhookSecret, { now });
};

describe("each webhook attempt is signed afresh with its own timestamp", () => {
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>> | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it("attempts at T, T+400 s and T+800 s (503, 503, 200) each carry their own time in X-Svc-Timestamp and webhook-timestamp, and each verifies at that time", async () => {
    const t0 = Date.parse("2026-03-01T12:00:00.000Z");
    let clock = t0;
    // The receiver's answer moves the clock on: the next attempt is sent 400 s after this one.
    receiver = await startWebhookReceiver((_hook, i) => {
      clock += 400_000;
      return { status: i < 2 ? 503 : 200 };
    });
    const event = { eventId: crypto.randomUUID(), appId: "alpha", postId: "3kabcdefghijk", stage: "transcribe" as const, status: "ready" as const, occurredAt: new Date(t0).toISOString() };
    const result = await deliverWebhook(event, { url: receiver.url, secret: webhookSecret }, quietLog, { ...deliveryDefaults, backoffMs: [10, 10], now: () => new Date(clock) });
    expect(result).toEqual({ outcome: "delivered", attempts: 3 });

    const sentAt = [t0, t0 + 400_000, t0 + 800_000];
    expect(receiver.received).toHaveLength(3);
    for (const [i, hook] of receiver.received.entries()) {
      expect(hook.headers["x-svc-timestamp"]).toBe(String(seconds(sentAt[i]!)));
      expect(hook.headers["webhook-timestamp"]).toBe(String(seconds(sentAt[i]!)));
      expect(hook.headers["x-svc-event-id"]).toBe(event.eventId);
      await verifiesAt(hook, sentAt[i]!);
    }
    // 400 s apart is outside the 300 s window: the first attempt's signature would not pass at the last one's time.
    await expect(verifyWebhook(receiver.received[0]!.body, receiver.received[0]!.headers, webhookSecret, { now: () => seconds(sentAt[2]!) })).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
  });
});

describe.each(backends)("the outbox's delivery long after the settle is signed when it is sent, on $name", (backend) => {
  let h: EnrichmentHarness;
  let down = true;
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, { env: { SVC_WAVEFORM: "stub" }, respond: () => ({ status: down ? 503 : 200 }) });
  });
  afterAll(async () => {
    h?.setClock(undefined);
    await h?.close();
  });

  it("settled while the receiver is down, delivered by the sweep 10 minutes later: the delivered request carries the later time and verifies then", async () => {
    const t0 = Date.now();
    const t1 = t0 + 10 * 60_000;
    h.setClock(t0);
    const post = await h.createAudioPost({ waveform: true });
    // The pass's quick attempts are signed at the settle's time, and all answered 503.
    await runPass({ ...h.pass, delivery: { ...h.pass.delivery, now: () => new Date(t0) } }, { appId: "alpha", postId: post.postId });
    expect(h.hooksFor(post.postId)).toHaveLength(3);
    expect(new Set(h.hooksFor(post.postId).map((hook) => hook.headers["x-svc-timestamp"]))).toEqual(new Set([String(seconds(t0))]));

    down = false;
    await sweep(
      {
        sql: h.sql,
        dispatcher: offDispatcher,
        webhooks: h.config.processing.webhooks,
        retry: h.config.processing.webhookRetry,
        log: quietLog,
        delivery: { ...h.pass.delivery, now: () => new Date(t1) },
      },
      new Date(t1),
    );
    const hooks = h.hooksFor(post.postId);
    expect(hooks).toHaveLength(4);
    const delivered = hooks[3]!;
    expect(delivered.headers["x-svc-timestamp"]).toBe(String(seconds(t1)));
    expect(delivered.headers["webhook-timestamp"]).toBe(String(seconds(t1)));
    expect(delivered.headers["x-svc-event-id"]).toBe(hooks[0]!.headers["x-svc-event-id"]);
    await verifiesAt(delivered, t1);
    expect((await h.events(post.postId))[0]!.outcome).toBe("delivered");
  });
});
