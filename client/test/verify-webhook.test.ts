import type { IncomingHttpHeaders } from "node:http";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noiseWav } from "../../test/support/seeded-audio";
import { startWebhookReceiver } from "../../test/support/webhook-receiver";
import type { TestService } from "../../test/support/test-service";
import { createClient, verifyWebhook, WebhookVerificationError } from "../src/index";
import { freshActor, startClientService } from "./support/client-harness";

const secret = "client-webhook-secret-0123456789abcdef";

const only = (headers: IncomingHttpHeaders, prefix: string) => Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith(prefix)));

describe("verifyWebhook on real deliveries of the service", () => {
  let svc: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let deliveries: typeof receiver.received;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    svc = await startClientService({ env: { SVC_APP_WEBHOOK_URLS: `alpha:${receiver.url}`, SVC_APP_WEBHOOK_SECRETS: `alpha:${secret}` } });
    const alice = createClient({ baseUrl: svc.baseUrl, token: svc.tenants.alpha.token }).as(freshActor());
    const audio = await alice.uploadAudio(noiseWav(), { mimeType: "audio/wav" });
    const { postId } = await alice.createPost({ text: "hooked", embed: { $type: "dev.svc.embed.audio", audio }, processing: { transcribe: true, waveform: true } });
    await svc.deps.enrichment.drain();
    deliveries = receiver.received.filter((h) => h.json.postId === postId);
    expect(deliveries.length).toBe(2);
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.close();
  });

  it("accepts a delivery with all its headers and returns the event with its id", async () => {
    for (const hook of deliveries) {
      const event = await verifyWebhook(hook.body, hook.headers, secret);
      expect(event).toEqual({ eventId: hook.headers["x-svc-event-id"], ...hook.json });
      expect(event.status).toBe("ready");
    }
  });

  it("accepts the service's X-Svc-* headers alone, and the Standard Webhooks headers alone", async () => {
    const hook = deliveries[0]!;
    await expect(verifyWebhook(hook.body, only(hook.headers, "x-svc-"), secret)).resolves.toMatchObject({ postId: hook.json.postId });
    await expect(verifyWebhook(hook.body.toString("utf8"), new Headers(only(hook.headers, "webhook-") as Record<string, string>), secret)).resolves.toMatchObject({
      eventId: hook.headers["webhook-id"],
    });
  });

  it("reads the headers of any object with Fetch's get(name), not only the global Headers class", async () => {
    const hook = deliveries[0]!;
    const copied = new Headers(only(hook.headers, "webhook-") as Record<string, string>);
    class OtherHeaders {
      get(name: string) {
        return copied.get(name);
      }
    }
    await expect(verifyWebhook(hook.body, new OtherHeaders(), secret)).resolves.toMatchObject({ eventId: hook.headers["webhook-id"] });
  });

  it.each([
    ["a changed body", (body: Buffer) => Buffer.from(body.toString().replace("ready", "failed")), (h: IncomingHttpHeaders) => h],
    ["a wrong secret", (body: Buffer) => body, (h: IncomingHttpHeaders) => h, "another-secret-of-enough-length-0000000"],
    ["a missing signature", (body: Buffer) => body, (h: IncomingHttpHeaders) => ({ ...only(h, "x-svc-"), "x-svc-signature": undefined })],
    ["a malformed signature", (body: Buffer) => body, (h: IncomingHttpHeaders) => ({ ...only(h, "x-svc-"), "x-svc-signature": "sha256=zz" })],
    ["a replay under another X-Svc-Event-Id (the Standard signature covers the id)", (body: Buffer) => body, (h: IncomingHttpHeaders) => ({ ...h, "x-svc-event-id": crypto.randomUUID() })],
    ["a replay under another webhook-id", (body: Buffer) => body, (h: IncomingHttpHeaders) => ({ ...h, "webhook-id": crypto.randomUUID(), "x-svc-event-id": undefined })],
    ["a Standard Webhooks signature of another version", (body: Buffer) => body, (h: IncomingHttpHeaders) => ({ ...only(h, "webhook-"), "webhook-signature": `v2,${String(h["webhook-signature"]).slice(3)}` })],
  ] as [string, (body: Buffer) => Buffer, (h: IncomingHttpHeaders) => IncomingHttpHeaders, string?][])("throws on %s", async (_, body, headers, key = secret) => {
    for (const hook of deliveries) {
      await expect(verifyWebhook(body(hook.body), headers(hook.headers), key)).rejects.toBeInstanceOf(WebhookVerificationError);
    }
  });

  it("throws on a stale or future timestamp, in both forms (5 minutes either way)", async () => {
    const hook = deliveries[0]!;
    const sentAt = Number(hook.headers["x-svc-timestamp"]);
    for (const headers of [only(hook.headers, "x-svc-"), only(hook.headers, "webhook-")]) {
      await expect(verifyWebhook(hook.body, headers, secret, { now: () => sentAt + 301 })).rejects.toThrow(/tolerance/);
      await expect(verifyWebhook(hook.body, headers, secret, { now: () => sentAt - 301 })).rejects.toThrow(/tolerance/);
      await expect(verifyWebhook(hook.body, headers, secret, { now: () => sentAt + 300 })).resolves.toBeDefined();
    }
  });

  it("agrees with the standardwebhooks library on the service's deliveries", () => {
    const library = new Webhook(secret, { format: "raw" });
    for (const hook of deliveries) expect(library.verify(hook.body.toString("utf8"), only(hook.headers, "webhook-") as Record<string, string>)).toEqual(hook.json);
  });
});

describe("verifyWebhook against the standardwebhooks library", () => {
  const library = new Webhook(secret, { format: "raw" });
  const payload = JSON.stringify({ postId: "3kabcdefghijk", originAppId: "alpha", stage: "trim", status: "ready", occurredAt: "2026-01-01T00:00:00.000Z" });

  it("accepts what the library signs, among several signatures", async () => {
    const at = new Date();
    const signature = library.sign("msg_1", at, payload);
    const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": `v1,bm90IHRoaXMgb25l ${signature}` };
    await expect(verifyWebhook(payload, headers, secret)).resolves.toEqual({ eventId: "msg_1", ...JSON.parse(payload) });
  });

  it("refuses what the library refuses: a signature not in the exact base64 it was sent in (padding dropped, characters added)", async () => {
    const at = new Date();
    const signature = library.sign("msg_4", at, payload);
    const base = { "webhook-id": "msg_4", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)) };
    for (const altered of [signature.replace(/=$/, ""), ` ${signature}`.replace(" v1,", "v1, "), signature.replace("v1,", "v1,\n"), `${signature}!`]) {
      const headers = { ...base, "webhook-signature": altered };
      expect(() => library.verify(payload, headers), altered).toThrow();
      await expect(verifyWebhook(payload, headers, secret), altered).rejects.toBeInstanceOf(WebhookVerificationError);
    }
    await expect(verifyWebhook(payload, { ...base, "webhook-signature": signature }, secret)).resolves.toMatchObject({ eventId: "msg_4" });
  });

  it("refuses what the library refuses: another id signed, or a stale timestamp", async () => {
    const at = new Date();
    const headers = { "webhook-id": "msg_2", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": library.sign("msg_1", at, payload) };
    expect(() => library.verify(payload, headers)).toThrow();
    await expect(verifyWebhook(payload, headers, secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    const old = new Date(Date.now() - 10 * 60_000);
    const stale = { "webhook-id": "msg_3", "webhook-timestamp": String(Math.floor(old.getTime() / 1000)), "webhook-signature": library.sign("msg_3", old, payload) };
    expect(() => library.verify(payload, stale)).toThrow();
    await expect(verifyWebhook(payload, stale, secret)).rejects.toBeInstanceOf(WebhookVerificationError);
  });
});
