/**
 * The sweep and a settling pass take the post's rows in one lock order, so neither fails with `deadlock detected`: a
 * settle takes the lease row, then the stage rows; the sweep, which picks stage rows first, never waits on a lease
 * row, and leaves a post whose lease row is held (its pass settling right now) to its next run. On Postgres, with the
 * settle's transaction held open from a second session: PGlite has one session.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { quietLog, startEnrichmentHarness, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { seedAudio } from "../../test/support/seeded-audio";
import type { Dispatcher } from "./dispatcher";
import type { Job } from "./job";
import { acquireLease } from "./lease";
import { settleStage, storeVariant } from "./pass-store";
import { sweep, type SweepResult } from "./sweep";

const postgres = backends.find((b) => b.name === "postgres");
const leaseMs = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!postgres)("the sweep and a settling pass, on postgres", () => {
  let h: EnrichmentHarness;
  const dispatched: Job[] = [];
  const dispatcher: Dispatcher = { mode: "sqs", dispatch: async (job) => void dispatched.push(job) };
  beforeAll(async () => {
    h = await startEnrichmentHarness(postgres!, { env: { SVC_TRIMMER: "stub" } });
  });
  afterAll(() => h?.close());
  const deps = () => ({ sql: h.sql, dispatcher, webhooks: h.config.processing.webhooks, retry: h.config.processing.webhookRetry, log: quietLog, delivery: h.pass.delivery });

  /** A trim stage whose pass stalled: its lease lapsed a minute ago, not released, and the sweep finds it lapsed. */
  const stalledPass = async () => {
    const start = Date.now();
    h.setClock(start - 3 * leaseMs);
    const post = await h.createAudioPost({ trim: true });
    h.setClock(undefined);
    const lease = (await acquireLease(h.sql, "alpha", post.postId, new Date(start - 2 * leaseMs), leaseMs)) as { token: string };
    const bytes = await seedAudio(h, "alpha");
    const audio = { appId: "alpha", cid: bytes.ref.$link, mimeType: bytes.mimeType, size: bytes.size, durationMs: 500 };
    const [{ generation }] = (await h.sql.query<{ generation: number }>(`SELECT generation FROM post_stages WHERE rkey = $1`, [post.postId])) as [{ generation: number }];
    return { post, token: lease.token, audio, generation };
  };
  /** Starts the sweep and resolves once it has ended or waits on a lock: reached, not slept for. */
  const startSweep = async (): Promise<{ sweeping: Promise<SweepResult | Error> }> => {
    let done = false;
    const sweeping = sweep(deps(), new Date()).then(
      (result) => ((done = true), result),
      (error: unknown) => ((done = true), error as Error),
    );
    for (let i = 0; i < 1000 && !done; i++) {
      const [row] = await h.sql.query<{ n: number }>(
        `SELECT count(*)::integer AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (row!.n > 0) break;
      await sleep(10);
    }
    return { sweeping };
  };

  it("a sweep that runs while a stalled pass stores its new bytes and then settles the stage: both complete, and the pass's settle stands", async () => {
    const { post, token, audio, generation } = await stalledPass();
    let swept: Promise<SweepResult | Error> | undefined;
    const settling = h.sql.transaction(async (tx) => {
      await storeVariant(tx, h.blobs, { appId: "alpha", rkey: post.postId, token, stage: "trim", audio, now: new Date() });
      // The sweep runs between the pass's byte change and its settle, as far as it gets.
      swept = (await startSweep()).sweeping;
      return settleStage(tx, { appId: "alpha", rkey: post.postId, token, stage: "trim", generation, status: "ready", now: new Date(), webhooks: true });
    });
    const [settle, sweepResult] = await Promise.allSettled([settling, settling.then(() => swept, () => swept)]);
    expect(settle.status === "rejected" ? String(settle.reason) : "settled").toBe("settled");
    expect(sweepResult.status === "fulfilled" && sweepResult.value instanceof Error ? String(sweepResult.value) : "swept").toBe("swept");
    expect((settle as PromiseFulfilledResult<{ settled: boolean }>).value.settled).toBe(true);
    // The post's pass was settling, not dead: the sweep left it alone.
    expect(dispatched.filter((j) => j.postId === post.postId)).toEqual([]);
    expect((await h.stages(post.postId)).trim).toMatchObject({ status: "ready", generation });
    expect((await h.events(post.postId)).map((e) => `${e.stage}:${e.status}`)).toEqual(["trim:ready"]);
  });

  it("a post the sweep left because its lease row was held is dispatched by the next sweep, its lapsed lease cleared, once that pass is gone", async () => {
    const { post, token, audio } = await stalledPass();
    let first: Promise<SweepResult | Error> | undefined;
    // The stalled pass dies mid-settle: its transaction rolls back.
    await h.sql
      .transaction(async (tx) => {
        await storeVariant(tx, h.blobs, { appId: "alpha", rkey: post.postId, token, stage: "trim", audio, now: new Date() });
        first = (await startSweep()).sweeping;
        throw new Error("the pass died");
      })
      .catch(() => undefined);
    expect(await first).not.toBeInstanceOf(Error);
    expect(dispatched.filter((j) => j.postId === post.postId)).toEqual([]);
    await sweep(deps(), new Date());
    expect(dispatched.filter((j) => j.postId === post.postId)).toEqual([{ appId: "alpha", postId: post.postId }]);
    const [lease] = await h.sql.query<{ lease_token: string | null }>(`SELECT lease_token FROM post_enrichment WHERE rkey = $1`, [post.postId]);
    expect(lease!.lease_token).toBeNull();
    expect((await h.stages(post.postId)).trim!.status).toBe("pending");
  });
});
