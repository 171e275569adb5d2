import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { quietLog, startEnrichmentHarness, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import type { Dispatcher } from "./dispatcher";
import { acquireLease } from "./lease";
import type { Job } from "./job";
import { pendingLapseMs, sweep } from "./sweep";

describe.each(backends)("the sweep on $name: nothing stays pending (docs/decisions.md#processing)", (backend) => {
  let h: EnrichmentHarness;
  const dispatched: Job[] = [];
  const dispatcher: Dispatcher = { mode: "sqs", dispatch: async (job) => void dispatched.push(job) };
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, { env: { SVC_WAVEFORM: "stub", SVC_TRIMMER: "stub" } });
  });
  afterAll(() => h?.close());
  const deps = () => ({ sql: h.sql, dispatcher, webhooks: h.config.processing.webhooks, log: quietLog, delivery: h.pass.delivery });

  it("a pending stage with no live lease for 15 minutes is dispatched again once, then settled failed (timeout) with its webhook", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const start = Date.now();
    await sweep(deps(), new Date(start + pendingLapseMs - 60_000));
    expect(dispatched.filter((j) => j.postId === post.postId)).toHaveLength(0);

    await sweep(deps(), new Date(start + pendingLapseMs + 1000));
    expect(dispatched.filter((j) => j.postId === post.postId)).toEqual([{ appId: "alpha", postId: post.postId }]);
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");

    // The re-dispatch restarted the clock: not yet lapsed again.
    await sweep(deps(), new Date(start + pendingLapseMs + 2000));
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");

    await sweep(deps(), new Date(start + 2 * pendingLapseMs + 5000));
    expect(dispatched.filter((j) => j.postId === post.postId)).toHaveLength(1);
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "failed", reason: "timeout" });
    expect(h.hooksFor(post.postId).map((hook) => [hook.json.stage, hook.json.status])).toEqual([["waveform", "failed"]]);
  });

  it("a stage whose post has a live lease is not lapsed", async () => {
    const post = await h.createAudioPost({ trim: true });
    const later = new Date(Date.now() + pendingLapseMs + 1000);
    await acquireLease(h.sql, "alpha", post.postId, later);
    await sweep(deps(), later);
    expect(dispatched.filter((j) => j.postId === post.postId)).toHaveLength(0);
    expect((await h.stages(post.postId)).trim).toMatchObject({ status: "pending" });
  });
});
