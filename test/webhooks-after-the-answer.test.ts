/**
 * A request never waits for a webhook receiver (docs/decisions.md#webhooks): with inline processing the pass runs
 * inside the create, but its deliveries go from the outbox after the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, migratedDatabase } from "./support/databases";
import { webhookSecret } from "./support/enrichment-harness";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startTestService, type TestService } from "./support/test-service";
import { startWebhookReceiver } from "./support/webhook-receiver";

describe.each(backends)("webhooks after the answer, on $name", (backend) => {
  let svc: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let release: () => void;
  const hanging = new Promise<void>((resolve) => (release = resolve));

  beforeAll(async () => {
    // The receiver holds every delivery open until the test releases it; an attempt's timeout is longer than any
    // test here, so a request that waited on the delivery could not answer while the receiver holds it.
    receiver = await startWebhookReceiver(() => ({ status: 200, until: hanging }));
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backend),
      env: {
        SVC_PROCESSING_INLINE: "true",
        SVC_PROCESSING_STUB: "true",
        SVC_APP_WEBHOOK_URLS: `alpha:${receiver.url}`,
        SVC_APP_WEBHOOK_SECRETS: `alpha:${webhookSecret}`,
      },
      enrichment: { delivery: { timeoutMs: 120_000 } },
    });
  });
  afterAll(async () => {
    release();
    await svc?.close();
    await receiver?.close();
  });

  const create = async (actor: string) => {
    const blob = await seedAudio(svc.deps, "alpha");
    return svc.post("/api/v1/posts", { actor, json: audioPost(blob, { waveform: true }) });
  };

  it("a create with inline processing answers while the receiver still holds its webhook open", async () => {
    const before = receiver.received.length;
    const created = await create("hang-1");
    expect(created.status).toBe(201);
    // The pass ran inside the request: the stage settled before the answer.
    expect((await svc.get(`/api/v1/posts/${created.json.data.postId}`)).json.data.processing.waveform.status).toBe("ready");
    // Its webhook reaches the receiver, which has not answered it: the create did not wait for it.
    await receiver.arrived(before + 1);
    expect(receiver.received.at(-1)!.json).toMatchObject({ postId: created.json.data.postId, stage: "waveform", status: "ready" });
    expect(receiver.open()).toBeGreaterThanOrEqual(1);
  });

  it("concurrent creates with inline processing are all 201 while the receiver hangs", async () => {
    const before = receiver.received.length;
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) => create(`hang-c${i}`)));
    expect(created.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    await receiver.arrived(before + 6);
    const ids = new Set(created.map((r) => r.json.data.postId));
    expect(receiver.received.filter((h) => ids.has(h.json.postId))).toHaveLength(6);
    // Every one of them still open at the receiver: none of the six answers waited for its delivery.
    expect(receiver.open()).toBeGreaterThanOrEqual(6);
  });

  it("once the receiver answers, the held deliveries are recorded delivered in the outbox", async () => {
    release();
    await svc.deps.enrichment.drain();
    const rows = await svc.deps.sql.query<{ outcome: string | null }>(`SELECT outcome FROM webhook_events WHERE app_id = 'alpha'`);
    expect(rows.length).toBeGreaterThanOrEqual(7);
    expect(rows.every((r) => r.outcome === "delivered")).toBe(true);
  });
});
