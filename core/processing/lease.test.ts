/** The post's lease (lease.ts): what a job does when it meets one, how the holder keeps it, and who may settle under it. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { startEnrichmentHarness, testProviders, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { failPendingStages } from "./dead-letter";
import type { Sql } from "../sql/port";
import { acquireLease, LeaseLost, releaseLease } from "./lease";
import { hasPendingStage } from "./pass-store";
import { nextStep } from "./retry-policy";
import { runPass } from "./run-pass";
import { createWorker } from "./worker";

describe.each(backends)("the post's lease on $name", (backend) => {
  let h: EnrichmentHarness;
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, { registry: testProviders().registry });
  });
  afterAll(() => h?.close());

  const job = (postId: string) => ({ appId: "alpha", postId });
  const leaseMs = 60_000;

  it("a job that meets another pass's live lease is retried later, never dropped, and touches none of that pass's stages", async () => {
    const post = await h.createAudioPost({ transcribe: true });
    const held = await acquireLease(h.sql, "alpha", post.postId, new Date(), leaseMs);
    expect(held.kind).toBe("leased");
    const outcome = await runPass(h.pass, job(post.postId));
    expect(outcome).toEqual({ kind: "busy" });
    expect(nextStep(outcome)).toEqual({ kind: "retry" });
    expect(nextStep({ kind: "retry" })).toEqual({ kind: "retry" });
    expect((await h.stages(post.postId)).transcribe!.status).toBe("pending");
    await releaseLease(h.sql, "alpha", post.postId, (held as { token: string }).token, new Date());
    expect(await runPass(h.pass, job(post.postId))).toEqual({ kind: "done", ran: true });
    expect((await h.stages(post.postId)).transcribe!.status).toBe("ready");
  });

  it("a pass failed by a store that dropped for a moment lets go of its lease once the store is back, so the job's next attempt runs rather than meeting it", async () => {
    const post = await h.createAudioPost({ waveform: true });
    // The store drops as the pass settles its stage, for 300 ms.
    let downUntil = 0;
    const down = () => Date.now() < downUntil;
    const dropped = () => Promise.reject(new Error("Connection terminated unexpectedly"));
    const flaky: Sql = {
      query: (text, params) => (down() ? dropped() : h.sql.query(text, params)),
      transaction: (fn) => {
        if (downUntil === 0) downUntil = Date.now() + 300;
        return down() ? dropped() : h.sql.transaction(fn);
      },
    };
    await expect(runPass({ ...h.pass, sql: flaky }, job(post.postId))).rejects.toThrow(/Connection terminated/);
    expect((await acquireLease(h.sql, "alpha", post.postId, new Date(), leaseMs)).kind).toBe("leased");
  });

  it("a lease past its time is taken over", async () => {
    const post = await h.createAudioPost({ waveform: true });
    await acquireLease(h.sql, "alpha", post.postId, new Date(Date.now() - leaseMs - 1000), leaseMs);
    expect(await runPass(h.pass, job(post.postId))).toEqual({ kind: "done", ran: true });
  });

  it("a dead-letter settle leaves alone the stages a live lease covers; once the lease lapsed it settles them", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const held = await acquireLease(h.sql, "alpha", post.postId, new Date(), leaseMs);
    const lapsed = new Date(Date.now() + leaseMs + 1000);
    expect(await failPendingStages(h.sql, job(post.postId), "dead_letter", new Date(), true)).toEqual([]);
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    expect((await failPendingStages(h.sql, job(post.postId), "dead_letter", lapsed, true)).map((e) => e.status)).toEqual(["failed"]);
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "failed", reason: "dead_letter" });
    await releaseLease(h.sql, "alpha", post.postId, (held as { token: string }).token, new Date());
  });

  it("a stage requested after the holder last looked, whose job met the lease, is run by the holder's job before it ends", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const worker = (sql: typeof h.sql) => createWorker({ ...h.pass, sql });
    let requested = false;
    // Just before the pass lets go of its lease, the author asks for transcribe and its job meets the lease.
    const atRelease = new Proxy(h.sql, {
      get(target, key, receiver) {
        if (key !== "query") return Reflect.get(target, key, receiver);
        return async (text: string, params?: unknown[]) => {
          if (!requested && text.includes("SET lease_token = NULL")) {
            requested = true;
            expect((await h.request(post.postId, { transcribe: true })).pending).toBe(true);
            expect(await worker(h.sql).runJob(job(post.postId), { attempt: 1, maxAttempts: 3 })).toEqual({ kind: "busy" });
          }
          return target.query(text, params as never);
        };
      },
    });
    expect(await worker(atRelease).runJob(job(post.postId), { attempt: 1, maxAttempts: 3 })).toMatchObject({ kind: "done" });
    expect(requested).toBe(true);
    const states = await h.stages(post.postId);
    expect(states.waveform!.status).toBe("ready");
    expect(states.transcribe!.status).toBe("ready");
    expect(await hasPendingStage(h.sql, "alpha", post.postId)).toBe(false);
  });

  /** A harness whose waveform provider waits for a gate the test opens, under a 600 ms lease renewed every 100 ms. */
  const gatedShortLease = async () => {
    let openGate!: () => void;
    const gatedProviders = testProviders({ gate: { waveform: new Promise<void>((resolve) => (openGate = resolve)) } });
    const short = await startEnrichmentHarness(backend, { registry: gatedProviders.registry, env: { SVC_LEASE_MS: "600", SVC_LEASE_HEARTBEAT_MS: "100" } });
    return { gatedProviders, short, openGate };
  };

  it("a pass whose lease is taken over stops its provider call at the next heartbeat, and settles nothing", async () => {
    const { gatedProviders, short, openGate } = await gatedShortLease();
    try {
      const post = await short.createAudioPost({ waveform: true });
      const running = runPass(short.pass, job(post.postId));
      await expect.poll(() => gatedProviders.count("waveform")).toBe(1);
      // Another pass takes the lease over (as after a stall past its term): the call in flight is no longer anyone's.
      await short.sql.query(`UPDATE post_enrichment SET lease_token = $2, lease_until = $3 WHERE rkey = $1`, [
        post.postId,
        "5f0c7a4e-0000-4000-8000-000000000000",
        new Date(Date.now() + leaseMs).toISOString(),
      ]);
      // The gate never opens: only the lost lease can end the call.
      expect(await running).toEqual({ kind: "busy" });
      const { signal } = gatedProviders.calls.find((c) => c.stage === "waveform")!;
      expect(signal?.reason).toBeInstanceOf(LeaseLost);
      expect((await short.stages(post.postId)).waveform!.status).toBe("pending");
    } finally {
      openGate();
      await short.close();
    }
  });

  it("a running pass renews its short lease (a heartbeat), so it stays live however long the pass works, and lets go when done", async () => {
    const { gatedProviders, short, openGate } = await gatedShortLease();
    try {
      const post = await short.createAudioPost({ waveform: true });
      const leaseUntil = async () => (await short.sql.query(`SELECT lease_until FROM post_enrichment WHERE rkey = $1`, [post.postId]))[0]?.lease_until as Date | null;
      const running = runPass(short.pass, job(post.postId));
      await expect.poll(() => gatedProviders.count("waveform")).toBe(1);
      const first = new Date((await leaseUntil())!).getTime();
      // Renewed past its first term while the pass still waits on its provider: never lapsed in between.
      await expect.poll(async () => new Date((await leaseUntil())!).getTime(), { timeout: 10_000, interval: 50 }).toBeGreaterThan(first + 600);
      expect(new Date((await leaseUntil())!).getTime()).toBeGreaterThan(Date.now());
      openGate();
      expect(await running).toEqual({ kind: "done", ran: true });
      expect(await leaseUntil()).toBeNull();
    } finally {
      openGate();
      await short.close();
    }
  });
});
