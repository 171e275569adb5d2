/**
 * A dead-lettered job's `failed` settles are stage settles like any other (docs/decisions.md#webhooks): the dead-letter consumer
 * delivers their webhooks, signed, one per stage it settled.
 */
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../../test/support/databases";
import { startEnrichmentHarness, testProviders, webhookSecret, type EnrichmentHarness } from "../../../test/support/enrichment-harness";
import { createLogger } from "../../observability/logger";
import { verifyWebhook } from "../../webhooks/verify-webhook";
import { deadLetterHandler } from "./settle-jobs";

const message = (body: string): SQSEvent => ({ Records: [{ body, attributes: {} } as SQSRecord] });

describe.each(backends)("a dead-lettered job's failed settles, on $name", (backend) => {
  let h: EnrichmentHarness;
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, { registry: testProviders().registry });
  });
  afterAll(() => h?.close());

  it("are delivered as webhooks: one signed `failed` hook per pending stage reaches the receiver", async () => {
    const post = await h.createAudioPost({ trim: true, transcribe: true, waveform: true });
    const handler = deadLetterHandler(async () => ({ sql: h.sql, config: h.config, logger: createLogger("silent"), now: () => new Date(), delivery: h.pass.delivery }));
    await handler(message(JSON.stringify({ appId: "alpha", postId: post.postId })));

    expect(Object.values(await h.stages(post.postId)).map((s) => `${s.status} (${s.reason})`)).toEqual(Array(3).fill("failed (dead_letter)"));
    const hooks = h.hooksFor(post.postId);
    expect(hooks.map((hook) => hook.json.stage).sort()).toEqual(["transcribe", "trim", "waveform"]);
    for (const hook of hooks) {
      expect(hook.json).toMatchObject({ postId: post.postId, originAppId: "alpha", status: "failed" });
      expect(verifyWebhook(hook.body, hook.headers, webhookSecret).eventId).toBe(hook.headers["x-svc-event-id"]);
    }
    expect(new Set(hooks.map((hook) => hook.headers["x-svc-event-id"])).size).toBe(3);
    expect((await h.events(post.postId)).map((e) => e.outcome)).toEqual(Array(3).fill("delivered"));
  });
});
