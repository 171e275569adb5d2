import { createHmac, randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseProcessingConfig } from "../config/processing-config";
import { readVariables } from "../config/read-variables";
import { backends } from "../../test/support/databases";
import { startEnrichmentHarness, webhookSecret, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { startWebhookReceiver, type ReceivedWebhook } from "../../test/support/webhook-receiver";
import { deliverWebhook, deliveryDefaults } from "./deliver-webhook";
import { claimMs } from "./outbox";
import { sweep } from "../processing/sweep";
import { offDispatcher } from "../processing/dispatcher";
import { runPass } from "../processing/run-pass";
import { verifyWebhook, WebhookVerificationError } from "./verify-webhook";
import { webhookBody, type WebhookEvent } from "./webhook-event";
import type { LogExtra } from "../observability/logger";

const secret = webhookSecret;
const event = (over: Partial<WebhookEvent> = {}): WebhookEvent => ({
  eventId: crypto.randomUUID(),
  appId: "alpha",
  postId: "3kabcdefghijk",
  stage: "transcribe",
  status: "ready",
  occurredAt: "2026-01-01T00:00:00.000Z",
  ...over,
});
const fast = { ...deliveryDefaults, backoffMs: [20, 50], timeoutMs: 500 };
const recordingLog = () => {
  const lines: { level: string; msg: string; extra: Record<string, unknown> }[] = [];
  const at = (level: string) => (msg: string, extra: LogExtra = {}) => void lines.push({ level, msg, extra: extra as Record<string, unknown> });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
};

describe("webhook delivery to a receiver on loopback (docs/decisions.md#webhooks)", () => {
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>> | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });
  const start = async (respond?: (hook: ReceivedWebhook, i: number) => { status: number; location?: string; delayMs?: number }) =>
    (receiver = await startWebhookReceiver(respond));

  it("the body is { postId, originAppId, stage, status, occurredAt }, signed over the raw bytes in both schemes", async () => {
    const r = await start();
    const e = event();
    const log = recordingLog();
    expect(await deliverWebhook(e, { url: r.url, secret }, log, fast)).toEqual({ outcome: "delivered", attempts: 1 });
    const [hook] = r.received;
    expect(hook!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(hook!.body.toString())).toEqual({ postId: e.postId, originAppId: "alpha", stage: "transcribe", status: "ready", occurredAt: e.occurredAt });
    expect(hook!.body.toString()).toBe(webhookBody(e));
    expect(hook!.headers["x-svc-event-id"]).toBe(e.eventId);
    expect(hook!.headers["x-svc-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(hook!.headers["webhook-id"]).toBe(e.eventId);
    expect(hook!.headers["webhook-timestamp"]).toBe(hook!.headers["x-svc-timestamp"]);
    // Our verifier, on the raw bytes.
    expect(verifyWebhook(hook!.body, hook!.headers, secret).eventId).toBe(e.eventId);
    // One changed byte fails.
    const tampered = Buffer.from(hook!.body);
    tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 1;
    expect(() => verifyWebhook(tampered, hook!.headers, secret)).toThrow(WebhookVerificationError);
  });

  it("the verifier refuses a correctly signed body that is not JSON with its own error, as the client's does", () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const body = "not json";
    const headers = {
      "x-svc-signature": `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`,
      "x-svc-timestamp": timestamp,
      "x-svc-event-id": randomUUID(),
    };
    expect(() => verifyWebhook(body, headers, secret)).toThrow(new WebhookVerificationError("the signed body is not JSON"));
  });

  it("the verifier finds the signature headers whatever the case of their names", async () => {
    const r = await start();
    const e = event();
    await deliverWebhook(e, { url: r.url, secret }, recordingLog(), fast);
    const hook = r.received[0]!;
    const asSent = { "X-Svc-Signature": hook.headers["x-svc-signature"], "X-Svc-Timestamp": hook.headers["x-svc-timestamp"], "X-Svc-Event-Id": hook.headers["x-svc-event-id"] };
    expect(verifyWebhook(hook.body, asSent, secret).eventId).toBe(e.eventId);
  });

  it("the verifier checks the Standard signature, which covers the event id: a delivery replayed under another id is refused", async () => {
    const r = await start();
    const e = event();
    await deliverWebhook(e, { url: r.url, secret }, recordingLog(), fast);
    const hook = r.received[0]!;
    expect(() => verifyWebhook(hook.body, { ...hook.headers, "x-svc-event-id": crypto.randomUUID() }, secret)).toThrow(WebhookVerificationError);
    const { "x-svc-event-id": _svc, ...standardId } = hook.headers;
    expect(() => verifyWebhook(hook.body, { ...standardId, "webhook-id": crypto.randomUUID() }, secret)).toThrow(/signature mismatch/);
    const svcOnly = Object.fromEntries(Object.entries(hook.headers).filter(([name]) => !name.startsWith("webhook-")));
    expect(verifyWebhook(hook.body, svcOnly, secret).eventId).toBe(e.eventId);
  });

  it("the verifier takes a Standard signature only as the exact base64 the service sends: characters around it are refused, as the standardwebhooks library refuses them", async () => {
    const r = await start();
    await deliverWebhook(event(), { url: r.url, secret }, recordingLog(), fast);
    const hook = r.received[0]!;
    const signature = String(hook.headers["webhook-signature"]);
    const svcless = Object.fromEntries(Object.entries(hook.headers).filter(([name]) => !name.startsWith("x-svc-")));
    for (const altered of [`${signature}!!`, `${signature}AAAA`, signature.replace("v1,", "v1,*"), signature.replace(/=$/, "")]) {
      const headers = { ...svcless, "webhook-signature": altered };
      expect(() => new Webhook(secret, { format: "raw" }).verify(hook.body.toString(), headers as Record<string, string>)).toThrow();
      expect(() => verifyWebhook(hook.body, headers, secret), altered).toThrow(/signature mismatch/);
    }
    expect(verifyWebhook(hook.body, svcless, secret)).toBeTruthy();
  });

  it("the standardwebhooks npm library verifies our deliveries (key: the secret's UTF-8 bytes)", async () => {
    const r = await start();
    await deliverWebhook(event(), { url: r.url, secret }, recordingLog(), fast);
    const hook = r.received[0]!;
    const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(hook.headers[h])]));
    expect(new Webhook(secret, { format: "raw" }).verify(hook.body.toString(), headers)).toEqual(JSON.parse(hook.body.toString()));
    expect(new Webhook(Buffer.from(secret).toString("base64")).verify(hook.body.toString(), headers)).toBeTruthy();
    expect(() => new Webhook("another-secret-0123456789abcdef0123", { format: "raw" }).verify(hook.body.toString(), headers)).toThrow();
  });

  it("the verifier rejects a missing signature and a timestamp outside ±5 minutes", async () => {
    const r = await start();
    await deliverWebhook(event(), { url: r.url, secret }, recordingLog(), fast);
    const hook = r.received[0]!;
    const ts = Number(hook.headers["x-svc-timestamp"]);
    expect(() => verifyWebhook(hook.body, { ...hook.headers, "x-svc-signature": undefined, "webhook-signature": undefined }, secret)).toThrow(/missing/);
    expect(() => verifyWebhook(hook.body, hook.headers, secret, ts + 301)).toThrow(/tolerance/);
    expect(() => verifyWebhook(hook.body, hook.headers, secret, ts - 301)).toThrow(/tolerance/);
    expect(verifyWebhook(hook.body, hook.headers, secret, ts + 299).eventId).toBe(hook.headers["x-svc-event-id"]);
  });

  it("500 then 200: retried with the same event id, each attempt signed and logged", async () => {
    const r = await start((_, i) => ({ status: i === 0 ? 500 : 200 }));
    const log = recordingLog();
    const e = event();
    expect(await deliverWebhook(e, { url: r.url, secret }, log, fast)).toEqual({ outcome: "delivered", attempts: 2 });
    expect(r.received.map((h) => h.headers["x-svc-event-id"])).toEqual([e.eventId, e.eventId]);
    for (const hook of r.received) expect(verifyWebhook(hook.body, hook.headers, secret).eventId).toBe(e.eventId);
    expect(log.lines.map((l) => [l.msg, l.extra.eventId, l.extra.attempt])).toEqual([
      ["webhook attempt failed", e.eventId, 1],
      ["webhook delivered", e.eventId, 2],
    ]);
  });

  it("3 attempts at most, with backoff between them", async () => {
    const r = await start(() => ({ status: 503 }));
    expect(await deliverWebhook(event(), { url: r.url, secret }, recordingLog(), fast)).toEqual({ outcome: "failed", attempts: 3, later: true });
    expect(r.received).toHaveLength(3);
    expect(r.received[1]!.at - r.received[0]!.at).toBeGreaterThanOrEqual(15);
    expect(r.received[2]!.at - r.received[1]!.at).toBeGreaterThanOrEqual(45);
    expect(deliveryDefaults).toMatchObject({ timeoutMs: 5000, backoffMs: [500, 2000] });
  });

  it("a 307 is never followed and not retried", async () => {
    const elsewhere = await startWebhookReceiver();
    try {
      const r = await start(() => ({ status: 307, location: elsewhere.url }));
      const log = recordingLog();
      expect(await deliverWebhook(event(), { url: r.url, secret }, log, fast)).toEqual({ outcome: "failed", attempts: 1 });
      expect(r.received).toHaveLength(1);
      expect(elsewhere.received).toHaveLength(0);
      expect(log.lines[0]!.extra.why).toBe("redirect not followed");
    } finally {
      await elsewhere.close();
    }
  });

  it("other 4xx stop at once; 408 and 429 are retried", async () => {
    const refusing = await start(() => ({ status: 400 }));
    expect(await deliverWebhook(event(), { url: refusing.url, secret }, recordingLog(), fast)).toEqual({ outcome: "failed", attempts: 1 });
    await refusing.close();
    const limited = await start((_, i) => ({ status: i === 0 ? 429 : i === 1 ? 408 : 200 }));
    expect(await deliverWebhook(event(), { url: limited.url, secret }, recordingLog(), fast)).toEqual({ outcome: "delivered", attempts: 3 });
  });

  it("a receiver slower than the timeout is an attempt that failed, and retried", async () => {
    // A timeout the second attempt (answered at once) meets even on a loaded machine; the first is answered long after.
    const r = await start((_, i) => ({ status: 200, delayMs: i === 0 ? 5_000 : 0 }));
    const log = recordingLog();
    expect(await deliverWebhook(event(), { url: r.url, secret }, log, { ...fast, timeoutMs: 1_000 })).toEqual({ outcome: "delivered", attempts: 2 });
    expect(log.lines[0]!.extra.why).toBe("timeout");
  });

  it("a network error is retried, then left to the outbox without throwing", async () => {
    const log = recordingLog();
    expect(await deliverWebhook(event(), { url: "http://127.0.0.1:1/hooks", secret }, log, fast)).toEqual({ outcome: "failed", attempts: 3, later: true });
    expect(log.lines.every((l) => l.extra.why === "network error")).toBe(true);
  });
});

describe("webhook configuration: a tenant misconfigured in each way is logged at error level and sent nothing", () => {
  const parse = (env: Record<string, string>) => {
    const log = recordingLog();
    return { webhooks: parseProcessingConfig(readVariables(env, () => undefined), log).webhooks, errors: log.lines.filter((l) => l.level === "error") };
  };
  const good = `alpha:${"s".repeat(32)}`;

  it.each([
    ["a URL but no secret", { SVC_APP_WEBHOOK_URLS: "alpha:https://hooks.example.com/x" }],
    ["a secret but no URL", { SVC_APP_WEBHOOK_SECRETS: good }],
    ["a secret shorter than 32 characters", { SVC_APP_WEBHOOK_URLS: "alpha:https://hooks.example.com/x", SVC_APP_WEBHOOK_SECRETS: `alpha:${"s".repeat(31)}` }],
    ["a plaintext URL off loopback", { SVC_APP_WEBHOOK_URLS: "alpha:http://hooks.example.com/x", SVC_APP_WEBHOOK_SECRETS: good }],
    ["a URL that is not a URL", { SVC_APP_WEBHOOK_URLS: "alpha:hooks", SVC_APP_WEBHOOK_SECRETS: good }],
    // fetch refuses such a URL: every delivery would fail as a "network error".
    ["a URL carrying credentials", { SVC_APP_WEBHOOK_URLS: "alpha:https://user:hunter2@hooks.example.com/x", SVC_APP_WEBHOOK_SECRETS: good }],
  ])("%s", (_, env) => {
    const { webhooks, errors } = parse(env);
    expect(webhooks.has("alpha")).toBe(false);
    expect(errors.some((e) => e.extra.appId === "alpha")).toBe(true);
    expect(JSON.stringify(errors)).not.toContain("s".repeat(31));
    expect(JSON.stringify(errors)).not.toContain("hunter2");
  });

  it("a tenant in neither variable gets none, silently; a bad entry affects only its tenant", () => {
    const { webhooks, errors } = parse({
      SVC_APP_WEBHOOK_URLS: "alpha:https://hooks.example.com/a,beta:http://hooks.example.com/b,gamma:http://localhost:9/x,delta:http://[::1]:9/x",
      SVC_APP_WEBHOOK_SECRETS: `${good},beta:${"b".repeat(32)},gamma:${"g".repeat(32)},delta:${"d".repeat(32)}`,
    });
    expect([...webhooks.keys()].sort()).toEqual(["alpha", "delta", "gamma"]);
    expect(errors.every((e) => e.extra.appId === "beta")).toBe(true);
    expect(parse({}).errors).toEqual([]);
  });
});

describe.each(backends)("the webhook outbox on $name", (backend) => {
  let h: EnrichmentHarness;
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, { env: { SVC_TRANSCRIBER: "elevenlabs", SVC_WAVEFORM: "stub" } });
  });
  afterAll(() => h?.close());

  it("a skipped settle at request time writes its event with the settle; a crash before delivery still delivers once the sweep runs, with the same event id", async () => {
    // The write happened (insertPost) but this "process" died before delivering: nothing was sent.
    const post = await h.createAudioPost({ transcribe: true });
    const [stored] = await h.events(post.postId);
    expect(stored).toMatchObject({ stage: "transcribe", status: "skipped", outcome: null });
    expect(h.hooksFor(post.postId)).toEqual([]);
    const deps = { sql: h.sql, dispatcher: offDispatcher, webhooks: h.config.processing.webhooks, retry: h.config.processing.webhookRetry, log: recordingLog(), delivery: h.pass.delivery };
    // While the writer's claim is live the sweep leaves the event alone.
    expect((await sweep(deps, new Date())).delivered).toBe(0);
    const later = new Date(Date.now() + claimMs + 1000);
    expect((await sweep(deps, later)).delivered).toBeGreaterThanOrEqual(1);
    const hooks = h.hooksFor(post.postId);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.headers["x-svc-event-id"]).toBe(stored!.event_id);
    expect(hooks[0]!.json).toMatchObject({ postId: post.postId, stage: "transcribe", status: "skipped" });
    expect((await h.events(post.postId))[0]!.outcome).toBe("delivered");
    await sweep(deps, new Date(later.getTime() + claimMs + 1000));
    expect(h.hooksFor(post.postId)).toHaveLength(1);
  });

  it("pending never fires a webhook; the settle does, delivered by the pass from the outbox", async () => {
    const post = await h.createAudioPost({ waveform: true });
    expect(await h.events(post.postId)).toEqual([]);
    await runPass(h.pass, { appId: "alpha", postId: post.postId });
    const [settled] = await h.events(post.postId);
    expect(settled).toMatchObject({ stage: "waveform", status: "ready", outcome: "delivered" });
    expect(h.hooksFor(post.postId).map((hook) => [hook.json.status, hook.headers["x-svc-event-id"]])).toEqual([["ready", settled!.event_id]]);
  });
});
