import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { quietLog, startEnrichmentHarness, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import type { Dispatcher } from "./dispatcher";
import { acquireLease, leaveToSweep, releaseLease } from "./lease";
import type { Job } from "./job";
import { pendingLapseMs, redispatchTriesMs, sweep } from "./sweep";

describe.each(backends)("the sweep on $name: nothing stays pending (docs/decisions.md#processing)", (backend) => {
  let h: EnrichmentHarness;
  const dispatched: Job[] = [];
  const dispatcher: Dispatcher = { mode: "sqs", dispatch: async (job) => void dispatched.push(job) };
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, { env: { SVC_WAVEFORM: "stub", SVC_TRIMMER: "stub" } });
  });
  afterAll(() => h?.close());
  const leaseMs = 60_000;
  const deps = () => ({ sql: h.sql, dispatcher, webhooks: h.config.processing.webhooks, retry: h.config.processing.webhookRetry, log: quietLog, delivery: h.pass.delivery });

  it("a pending stage no pass has leased for 15 minutes (its job was lost) is dispatched again once, then settled failed (timeout) with its webhook", async () => {
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

  it("a lapsed stage whose re-dispatch fails (the queue is down) keeps its one retry: a later sweep sends it, and only a lapse after that times it out", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const start = Date.now();
    const sent: Job[] = [];
    let queueUp = false;
    const flaky: Dispatcher = {
      mode: "sqs",
      dispatch: async (job) => {
        if (!queueUp) throw new Error("queue unavailable");
        sent.push(job);
      },
    };
    const mine = () => sent.filter((j) => j.postId === post.postId);
    const row = async () =>
      (await h.sql.query<{ status: string; redispatched: boolean; updated_at: Date }>(
        `SELECT status, redispatched, updated_at FROM post_stages WHERE app_id = 'alpha' AND rkey = $1 AND stage = 'waveform'`,
        [post.postId],
      ))[0]!;
    const before = await row();
    await sweep({ ...deps(), dispatcher: flaky }, new Date(start + pendingLapseMs + 1000));
    expect(mine()).toHaveLength(0);
    // The mark is taken back: the stage is as it was.
    expect(await row()).toEqual(before);

    queueUp = true;
    await sweep({ ...deps(), dispatcher: flaky }, new Date(start + pendingLapseMs + 31_000));
    expect(mine()).toEqual([{ appId: "alpha", postId: post.postId }]);
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    await sweep({ ...deps(), dispatcher: flaky }, new Date(start + 2 * pendingLapseMs + 40_000));
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "failed", reason: "timeout" });
  });

  it("a stage's time moves only when the stage does: the sweep's re-dispatch neither moves it nor, taken back, moves it back", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const start = Date.now();
    const updatedAt = async () => (await h.sql.query<{ updated_at: Date }>(
      `SELECT updated_at FROM post_stages WHERE app_id = 'alpha' AND rkey = $1 AND stage = 'waveform'`,
      [post.postId],
    ))[0]!.updated_at.getTime();
    const queued = await updatedAt();
    const seen: number[] = [];
    let queueUp = false;
    // What a reader sees while the sweep sends: between its mark and the send's outcome.
    const watched: Dispatcher = {
      mode: "sqs",
      dispatch: async () => {
        seen.push(await updatedAt());
        if (!queueUp) throw new Error("queue unavailable");
      },
    };
    await sweep({ ...deps(), dispatcher: watched }, new Date(start + pendingLapseMs + 1000));
    queueUp = true;
    await sweep({ ...deps(), dispatcher: watched }, new Date(start + pendingLapseMs + 31_000));
    expect(seen).toEqual([queued, queued]);
    expect(await updatedAt()).toBe(queued);
    // Sent, its clock restarted all the same: a sweep soon after does not time it out; a lapse after that does,
    // and that settle moves the stage's time forward.
    await sweep({ ...deps(), dispatcher: watched }, new Date(start + pendingLapseMs + 120_000));
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    await sweep({ ...deps(), dispatcher: watched }, new Date(start + 2 * pendingLapseMs + 40_000));
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "failed", reason: "timeout" });
    expect(await updatedAt()).toBeGreaterThan(queued);
  });

  it("a lapsed stage whose re-dispatch keeps failing (a queue deleted, its access denied) is not pending for ever: past an hour of failed sends it keeps its mark and the next lapse settles it failed (timeout)", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const start = Date.now();
    const broken: Dispatcher = {
      mode: "sqs",
      dispatch: async () => {
        throw new Error("AccessDenied");
      },
    };
    // A sweep a minute, as on a Node host: each tries, fails and takes its mark back while the stage is young.
    let at = start + pendingLapseMs + 1000;
    for (; at < start + redispatchTriesMs; at += 60_000) await sweep({ ...deps(), dispatcher: broken }, new Date(at));
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    for (const end = at + pendingLapseMs + 120_000; at < end; at += 60_000) await sweep({ ...deps(), dispatcher: broken }, new Date(at));
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "failed", reason: "timeout" });
    expect(h.hooksFor(post.postId).map((hook) => [hook.json.stage, hook.json.status])).toEqual([["waveform", "failed"]]);
  });

  it("a post whose job could not be queued is dispatched at the next sweep, though a killed pass's lapsed lease was left on it", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const now = Date.now();
    // A pass killed two hours ago: its lease lapsed and was never released.
    await acquireLease(h.sql, "alpha", post.postId, new Date(now - 2 * 3600_000), leaseMs);
    await leaveToSweep(h.sql, "alpha", post.postId, new Date(now));
    await sweep(deps(), new Date(now + 30_000));
    expect(dispatched.filter((j) => j.postId === post.postId)).toEqual([{ appId: "alpha", postId: post.postId }]);
  });

  it("a stage whose post has a live lease is not lapsed", async () => {
    const post = await h.createAudioPost({ trim: true });
    const later = new Date(Date.now() + pendingLapseMs + 1000);
    await acquireLease(h.sql, "alpha", post.postId, later, leaseMs);
    await sweep(deps(), later);
    expect(dispatched.filter((j) => j.postId === post.postId)).toHaveLength(0);
    expect((await h.stages(post.postId)).trim).toMatchObject({ status: "pending" });
  });

  it("a stage whose pass's lease lapsed (its holder died) is dispatched again at the next sweep, not 15 minutes on; when the lease of the pass it went to lapses too, it settles failed (timeout)", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const start = Date.now();
    const at = (ms: number) => new Date(start + ms);
    const mine = () => dispatched.filter((j) => j.postId === post.postId);
    await acquireLease(h.sql, "alpha", post.postId, at(0), leaseMs);
    await sweep(deps(), at(leaseMs - 1000));
    expect(mine()).toHaveLength(0);

    await sweep(deps(), at(leaseMs + 1000));
    expect(mine()).toHaveLength(1);
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    // The job it went to has not run yet: no second lapse.
    await sweep(deps(), at(leaseMs + 2000));
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");

    // That pass takes the lease and dies too.
    expect((await acquireLease(h.sql, "alpha", post.postId, at(leaseMs + 3000), leaseMs)).kind).toBe("leased");
    await sweep(deps(), at(2 * leaseMs + 2000));
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    await sweep(deps(), at(2 * leaseMs + 4000));
    expect(mine()).toHaveLength(1);
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "failed", reason: "timeout" });
    expect(h.hooksFor(post.postId).map((hook) => [hook.json.stage, hook.json.status])).toEqual([["waveform", "failed"]]);
  });

  it("a stage queued over 15 minutes ago whose job is between two attempts (its pass let go of the lease for a retry seconds ago) is not lapsed", async () => {
    const post = await h.createAudioPost({ trim: true });
    const start = Date.now();
    // A long pass: leased 14 minutes after the request, then asks for a retry at 16 and lets go of the lease.
    const lease = await acquireLease(h.sql, "alpha", post.postId, new Date(start + 14 * 60_000), leaseMs);
    await releaseLease(h.sql, "alpha", post.postId, (lease as { token: string }).token, new Date(start + 16 * 60_000));
    // The sweep runs in the seconds before the retry arrives.
    await sweep(deps(), new Date(start + 16 * 60_000 + 5_000));
    expect(dispatched.filter((j) => j.postId === post.postId)).toHaveLength(0);
    expect((await h.stages(post.postId)).trim).toMatchObject({ status: "pending" });
    // Its job lost after all, the stage lapses 15 minutes after the pass let go.
    await sweep(deps(), new Date(start + 31 * 60_000 + 1000));
    expect(dispatched.filter((j) => j.postId === post.postId)).toHaveLength(1);
  });

  it("a lease that lapsed before the stage was requested, or was released, does not lapse the stage", async () => {
    const stale = await h.createAudioPost({ trim: true });
    const start = Date.now();
    await acquireLease(h.sql, "alpha", stale.postId, new Date(start - 3 * leaseMs), leaseMs);
    const released = await h.createAudioPost({ trim: true });
    const lease = await acquireLease(h.sql, "alpha", released.postId, new Date(start), leaseMs);
    await releaseLease(h.sql, "alpha", released.postId, (lease as { token: string }).token, new Date(start));
    await sweep(deps(), new Date(start + 2 * leaseMs));
    expect(dispatched.filter((j) => j.postId === stale.postId || j.postId === released.postId)).toHaveLength(0);
  });
});
