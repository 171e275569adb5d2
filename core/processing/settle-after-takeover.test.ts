/**
 * A pass that lost its lease settles nothing (docs/decisions.md#dispatch-and-the-worker), even when its settle
 * statement was under way as another pass took the lease over: the settle locks the lease row, so a takeover waits
 * for a settle that began first, and a settle after a takeover sees the new token. A dead letter locks it too, and
 * leaves alone the stages of a pass that took the lapsed lease over as it looked. On two Postgres sessions (and a
 * third holding a stage's row for a moment, as a PATCH's upsert or the sweep's pick does): PGlite has one session.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { startEnrichmentHarness, testProviders, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { seedAudio } from "../../test/support/seeded-audio";
import { failPendingStages } from "./dead-letter";
import { acquireLease, LeaseLost, releaseLease } from "./lease";
import { settleStage, storeTranscript, storeVariant } from "./pass-store";
import { runPass } from "./run-pass";

const postgres = backends.find((b) => b.name === "postgres");
const leaseMs = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise and its resolver: a transaction held open until the test lets it go. */
const gate = () => {
  let open!: () => void;
  const closed = new Promise<void>((resolve) => (open = resolve));
  return { closed, open };
};

describe.skipIf(!postgres)("a settle racing a takeover of its lease, on postgres", () => {
  let h: EnrichmentHarness;
  const providers = testProviders();
  beforeAll(async () => {
    h = await startEnrichmentHarness(postgres!, { registry: providers.registry });
  });
  afterAll(() => h?.close());

  /** Resolves once `n` sessions of the database wait on a lock: the interleaving is reached, not guessed. */
  const waitingOnLocks = async (n: number) => {
    for (let i = 0; i < 1000; i++) {
      const [row] = await h.sql.query<{ n: number }>(
        `SELECT count(*)::integer AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (row!.n >= n) return;
      await sleep(10);
    }
    throw new Error(`fewer than ${n} sessions waited on a lock`);
  };
  /** A session holding the stage's row (a PATCH's upsert, the sweep's pick) until `held.open()`. */
  const holdStageRow = (postId: string, stage: string, held: ReturnType<typeof gate>) => {
    const locked = gate();
    const done = h.sql.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM post_stages WHERE app_id = 'alpha' AND rkey = $1 AND stage = $2 FOR UPDATE`, [postId, stage]);
      locked.open();
      await held.closed;
    });
    return { locked: locked.closed, done };
  };
  /** The stalled pass's transcribe settle: its transcript and the stage, in one transaction, as runPass settles. */
  const staleSettle = (postId: string, token: string, generation: number) =>
    h.sql.transaction(async (tx) => {
      await storeTranscript(tx, "alpha", postId, { text: "transcript of the old bytes" }, "bafyoldbytes", new Date());
      const result = await settleStage(tx, { appId: "alpha", rkey: postId, token, stage: "transcribe", generation, status: "ready", now: new Date(), webhooks: true });
      if (!result.settled) throw new LeaseLost();
      return result;
    });
  const generationOf = async (postId: string, stage: string) =>
    (await h.sql.query<{ generation: number }>(`SELECT generation FROM post_stages WHERE rkey = $1 AND stage = $2`, [postId, stage]))[0]!.generation;
  const transcriptOf = async (postId: string) =>
    (await h.sql.query<{ text: string }>(`SELECT record->>'text' AS text FROM transcripts WHERE app_id = 'alpha' AND rkey = $1`, [postId]))[0]?.text;

  it("a stalled pass whose settle reaches the database while another pass's takeover is committing settles nothing, and its transcript is not stored", async () => {
    const post = await h.createAudioPost({ trim: true, transcribe: true });
    const generation = await generationOf(post.postId, "transcribe");
    // The stalled pass's lease lapsed; another pass takes it over in a transaction the test holds open.
    const stale = (await acquireLease(h.sql, "alpha", post.postId, new Date(Date.now() - 2 * leaseMs), leaseMs)) as { token: string };
    const takeover = gate();
    const taken = gate();
    let token = "";
    const taking = h.sql.transaction(async (tx) => {
      token = ((await acquireLease(tx, "alpha", post.postId, new Date(), leaseMs)) as { token: string }).token;
      taken.open();
      await takeover.closed;
    });
    await taken.closed;
    const blocker = gate();
    const stageRow = holdStageRow(post.postId, "transcribe", blocker);
    await stageRow.locked;

    const settling = staleSettle(post.postId, stale.token, generation).then(() => "settled", (error: unknown) => error);
    await waitingOnLocks(1);
    takeover.open();
    await taking;
    // The new holder's trim changes the bytes while the stalled settle is still under way.
    const bytes = await seedAudio(h, "alpha");
    const audio = { appId: "alpha", cid: bytes.ref.$link, mimeType: bytes.mimeType, size: bytes.size, durationMs: 500 };
    const trimmed = await h.sql.transaction(async (tx) => {
      await storeVariant(tx, h.blobs, { appId: "alpha", rkey: post.postId, token, stage: "trim", audio, now: new Date() });
      return settleStage(tx, { appId: "alpha", rkey: post.postId, token, stage: "trim", generation: await generationOf(post.postId, "trim"), status: "ready", now: new Date(), webhooks: true });
    });
    expect(trimmed.settled).toBe(true);
    blocker.open();
    await stageRow.done;

    expect(await settling).toBeInstanceOf(LeaseLost);
    expect(await transcriptOf(post.postId)).toBeUndefined();
    expect((await h.stages(post.postId)).transcribe).toMatchObject({ status: "pending", generation });
    expect((await h.events(post.postId)).map((e) => `${e.stage}:${e.status}`)).toEqual(["trim:ready"]);
    // The new holder transcribes the bytes it made.
    await releaseLease(h.sql, "alpha", post.postId, token, new Date());
    expect(await runPass(h.pass, { appId: "alpha", postId: post.postId })).toEqual({ kind: "done", ran: true });
    expect(providers.calls.filter((c) => c.stage === "transcribe").at(-1)!.cid).toBe(bytes.ref.$link);
    expect(await transcriptOf(post.postId)).not.toBe("transcript of the old bytes");
  });

  it("a settle under way before a takeover commits before it: the new holder's new bytes send the stage back to pending, and the transcript served describes them", async () => {
    const post = await h.createAudioPost({ trim: true, transcribe: true });
    const generation = await generationOf(post.postId, "transcribe");
    const stale = (await acquireLease(h.sql, "alpha", post.postId, new Date(Date.now() - 2 * leaseMs), leaseMs)) as { token: string };
    const blocker = gate();
    const stageRow = holdStageRow(post.postId, "transcribe", blocker);
    await stageRow.locked;
    const settling = staleSettle(post.postId, stale.token, generation);
    await waitingOnLocks(1);
    // Another pass takes the lapsed lease and runs trim, then transcribe.
    const before = providers.calls.length;
    const pass = runPass(h.pass, { appId: "alpha", postId: post.postId });
    await waitingOnLocks(2);
    blocker.open();
    await stageRow.done;
    expect((await settling).settled).toBe(true);
    const outcome = await pass;

    expect(await transcriptOf(post.postId)).not.toBe("transcript of the old bytes");
    const calls = providers.calls.slice(before);
    expect(calls.map((c) => c.stage)).toEqual(["trim", "transcribe"]);
    const [served] = await h.sql.query<{ audio_cid: string }>(`SELECT audio_cid FROM post_enrichment WHERE rkey = $1`, [post.postId]);
    expect(calls[1]!.cid).toBe(served!.audio_cid);
    expect((await h.stages(post.postId)).transcribe).toMatchObject({ status: "ready", generation: generation + 1 });
    expect(outcome).toEqual({ kind: "done", ran: true });
  });

  it("a dead letter handled while another pass's takeover of the lapsed lease is committing waits for it, and fails none of the stages that pass took up", async () => {
    const post = await h.createAudioPost({ trim: true, transcribe: true });
    // The dead job's pass let its lease lapse; another pass takes it over in a transaction the test holds open.
    await acquireLease(h.sql, "alpha", post.postId, new Date(Date.now() - 2 * leaseMs), leaseMs);
    const takeover = gate();
    const taken = gate();
    const taking = h.sql.transaction(async (tx) => {
      await acquireLease(tx, "alpha", post.postId, new Date(), leaseMs);
      taken.open();
      await takeover.closed;
    });
    await taken.closed;
    const dead = failPendingStages(h.sql, { appId: "alpha", postId: post.postId }, "dead_letter", new Date(), true).then(
      (events) => events,
      (error: unknown) => error,
    );
    // Unlocked, the dead letter read the lapsed lease and failed the stages at once; locked, it waits here.
    const settledFirst = await Promise.race([dead.then(() => true), sleep(1_000).then(() => false)]);
    takeover.open();
    await taking;
    expect(settledFirst).toBe(false);
    expect(await dead).toEqual([]);
    expect((await h.stages(post.postId)).transcribe).toMatchObject({ status: "pending" });
    expect((await h.stages(post.postId)).trim).toMatchObject({ status: "pending" });
  });
});
