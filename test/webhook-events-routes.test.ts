/**
 * An operator lists a tenant's undelivered webhook events and redelivers them through the system routes
 * (docs/operations.md, "a tenant whose webhooks fail"); the sweep sends them under their original event ids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSweep } from "../core/runtime/jobs/settle-jobs";
import { backends, migratedDatabase } from "./support/databases";
import { webhookSecret } from "./support/enrichment-harness";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startTestService, type CallResult, type TestService } from "./support/test-service";
import { startWebhookReceiver } from "./support/webhook-receiver";

const systemToken = "test-system-token-0123456789abcdef0123";
const hour = 3_600_000;

describe.each(backends)("the webhook-events system routes, on $name", (backend) => {
  let svc: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let down = true;
  /** The service's clock: the test moves it instead of waiting. */
  let clock = Date.now();
  beforeAll(async () => {
    receiver = await startWebhookReceiver(() => ({ status: down ? 503 : 200 }));
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backend),
      now: () => new Date(clock),
      env: {
        SVC_PROCESSING_INLINE: "true",
        SVC_PROCESSING_STUB: "true",
        SVC_APP_WEBHOOK_URLS: `alpha:${receiver.url}`,
        SVC_APP_WEBHOOK_SECRETS: `alpha:${webhookSecret}`,
      },
      enrichment: { delivery: { backoffMs: [10, 10], timeoutMs: 2000 } },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.close();
  });

  const list = (query: string, token: string | null = systemToken) =>
    svc.get(`/api/v1/system/webhook-events${query}`, { token: null, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const redeliver = (json: unknown, token: string | null = systemToken) =>
    svc.post("/api/v1/system/webhook-events/redeliver", { token: null, json, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const items = (res: CallResult) => res.json.data.items as { eventId: string; postId: string; outcome: string | null; rounds: number; nextAttemptAt: string | null }[];
  const sweepNow = () => runSweep({ ...svc.deps, now: () => new Date(clock) }, svc.deps.enrichment.dispatcher);

  let postId: string;
  let eventId: string;

  it("lists a tenant's undelivered events, oldest first, with when each is tried next", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const created = await svc.post("/api/v1/posts", { actor: "ops-1", json: audioPost(blob, { waveform: true }) });
    expect(created.status).toBe(201);
    postId = created.json.data.postId;
    await svc.deps.enrichment.drain(); // the quick attempts, all 503
    const res = await list("?appId=alpha");
    expect(res.status).toBe(200);
    const mine = items(res).filter((e) => e.postId === postId);
    expect(mine).toEqual([
      expect.objectContaining({ postId, stage: "waveform", status: "ready", outcome: null, attempts: 3, rounds: 1, nextAttemptAt: expect.any(String) }),
    ]);
    eventId = mine[0]!.eventId;
    expect(Date.parse(mine[0]!.nextAttemptAt!)).toBeGreaterThan(clock);
    expect(items(await list("?appId=beta"))).toEqual([]);
  });

  it("refuses a token that is not the system token (401), and bad input (400), changing nothing", async () => {
    const tenant = svc.tenants.alpha.token;
    expect((await list("?appId=alpha", tenant)).status).toBe(401);
    expect((await list("?appId=alpha", null)).status).toBe(401);
    expect((await redeliver({ appId: "alpha" }, tenant)).status).toBe(401);
    expect((await redeliver({ appId: "alpha" }, null)).status).toBe(401);
    const noApp = await list("");
    expect([noApp.status, noApp.json.error.code]).toEqual([400, "VALIDATION_ERROR"]);
    const badIds = await redeliver({ appId: "alpha", eventIds: ["not-a-uuid"] });
    expect([badIds.status, badIds.json.error.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(items(await list("?appId=alpha")).find((e) => e.eventId === eventId)).toMatchObject({ outcome: null, rounds: 1 });
  });

  it("an event given up after 24 hours is listed as such; redelivered, the sweep sends it under its original event id", async () => {
    clock += 25 * hour;
    await sweepNow();
    expect(items(await list("?appId=alpha")).find((e) => e.eventId === eventId)).toMatchObject({ outcome: "given_up", nextAttemptAt: null });
    const before = receiver.received.length;
    await sweepNow();
    expect(receiver.received.length).toBe(before); // given up: the sweep no longer tries it

    down = false;
    // A UUID in capitals names the same event (the schema takes it, so the match must too).
    const res = await redeliver({ appId: "alpha", eventIds: [eventId.toUpperCase()] });
    expect(res.status).toBe(202);
    expect(res.json.data).toEqual({ redelivered: 1, eventIds: [eventId] });
    await sweepNow();
    const sent = receiver.received.slice(before);
    expect(sent.map((hook) => [hook.headers["x-svc-event-id"], hook.json.postId])).toEqual([[eventId, postId]]);
    expect(items(await list("?appId=alpha")).find((e) => e.eventId === eventId)).toBeUndefined();
    // Delivered events are not redelivered.
    expect((await redeliver({ appId: "alpha", eventIds: [eventId] })).json.data).toEqual({ redelivered: 0, eventIds: [] });
  });
});
