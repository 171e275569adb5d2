/**
 * The sweep's statements in bounded batches (docs/decisions.md#processing): the Data API refuses a result over
 * 1 MiB after the statement has run, so an unbounded first-lapse mark would commit, reach no dispatch, and a later
 * sweep would time its stages out unsent. Here a result limit of a few rows stands in for the 1 MiB, with a batch
 * to match; on the Data API emulator a backlog past the real limit runs at the real batch.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, dataApiBackends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { resultLimited } from "../../test/support/result-limited-sql";
import { startWebhookReceiver } from "../../test/support/webhook-receiver";
import type { Job } from "./job";
import { markMarginMs, pendingLapseMs, sendReserveMs, sweep, type SweepDeps } from "./sweep";

const quiet = { info() {}, warn() {}, error() {} };
const retry = { baseMs: 30_000, capMs: 3_600_000, giveUpMs: 86_400_000, retentionMs: 30 * 86_400_000 };

describe.each([...backends, ...dataApiBackends])("the sweep in batches on $name", (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await migratedDatabase(backend);
  }, 60_000);
  afterAll(() => db?.close());

  /** `posts` posts of `prefix`, each with `stages` pending stages queued half an hour before `now`: their jobs were lost. */
  const lostJobs = async (prefix: string, posts: number, stages: string[], now: Date) => {
    await db.query(
      `INSERT INTO posts (app_id, rkey, record, cid, author_id)
       SELECT 'alpha', $2 || lpad(i::text, 8, '0'), '{"$type":"dev.svc.audio.post","text":"x"}'::json, 'bafy' || i, 'author'
         FROM generate_series(1, $1::int) i`,
      [posts, prefix],
    );
    await db.query(
      `INSERT INTO post_stages (app_id, rkey, stage, status, updated_at)
       SELECT 'alpha', $2 || lpad(i::text, 8, '0'), st, 'pending', $3::timestamptz
         FROM generate_series(1, $1::int) i, unnest(string_to_array($4, ',')) st`,
      [posts, prefix, new Date(now.getTime() - 30 * 60_000).toISOString(), stages.join(",")],
    );
  };
  const statesOf = async (prefix: string) =>
    db.query<{ status: string; reason: string | null; redispatched: boolean; n: number }>(
      `SELECT status, reason, redispatched, count(*)::int AS n FROM post_stages WHERE rkey LIKE $1 || '%'
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [prefix],
    );
  const recording = () => {
    const sent: Job[] = [];
    return { sent, dispatcher: { mode: "sqs" as const, dispatch: async (job: Job) => void sent.push(job) } };
  };

  it("lapsed stages of more posts than a batch are each dispatched again once, and none is timed out unsent", async () => {
    const now = new Date();
    await lostJobs("3kb", 23, ["trim", "transcribe", "waveform"], now);
    const { sent, dispatcher } = recording();
    // A batch of 10 stages takes whole posts: at most 30 rows come back.
    const deps: SweepDeps = { sql: resultLimited(db, 30), dispatcher, webhooks: new Map(), retry, log: quiet, batch: 10 };
    const first = await sweep(deps, now);
    expect(first).toMatchObject({ redispatched: 23, timedOut: 0 });
    expect(new Set(sent.map((j) => j.postId)).size).toBe(23);
    expect(sent).toHaveLength(23);
    expect(await statesOf("3kb")).toEqual([{ status: "pending", reason: null, redispatched: true, n: 69 }]);

    // Sent, the re-dispatch restarted their clock: a sweep a minute on neither sends nor times out any.
    expect(await sweep(deps, new Date(now.getTime() + 60_000))).toMatchObject({ redispatched: 0, timedOut: 0 });
    // Lapsing again, each settles failed (timeout), in batches too.
    expect(await sweep(deps, new Date(now.getTime() + pendingLapseMs + 60_000))).toMatchObject({ redispatched: 0, timedOut: 69 });
    expect(sent).toHaveLength(23);
    expect(await statesOf("3kb")).toEqual([{ status: "failed", reason: "timeout", redispatched: true, n: 69 }]);
  });

  it("a failed re-dispatch ends the run after its batch, its stages unmarked: a later sweep sends them, none timed out unsent", async () => {
    const now = new Date(Date.now() + 3 * 60 * 60_000);
    await lostJobs("3kc", 25, ["waveform"], now);
    const { sent, dispatcher } = recording();
    let down = true;
    const flaky = { mode: "sqs" as const, dispatch: async (job: Job) => (down ? Promise.reject(new Error("queue unavailable")) : dispatcher.dispatch(job)) };
    const deps: SweepDeps = { sql: resultLimited(db, 10), dispatcher: flaky, webhooks: new Map(), retry, log: quiet, batch: 10 };
    expect(await sweep(deps, now)).toMatchObject({ redispatched: 0 });
    expect(await statesOf("3kc")).toEqual([{ status: "pending", reason: null, redispatched: false, n: 25 }]);

    down = false;
    expect(await sweep(deps, new Date(now.getTime() + 30_000))).toMatchObject({ redispatched: 25 });
    expect(new Set(sent.map((j) => j.postId)).size).toBe(25);
    expect(await sweep(deps, new Date(now.getTime() + pendingLapseMs + 60_000))).toMatchObject({ redispatched: 0, timedOut: 25 });
    expect(sent).toHaveLength(25);
  });

  it("a sweep whose time runs short marks no batch it cannot send in time, and takes back the marks it has no time to send: none is left unsent", async () => {
    const now = new Date(Date.now() + 9 * 60 * 60_000);
    await lostJobs("3ke", 25, ["waveform"], now);
    const { sent, dispatcher } = recording();
    // Each send takes 3 s of the run's 30 s (a slow queue); the clock is the function's remaining time.
    let elapsedMs = 0;
    const slow = { mode: "sqs" as const, dispatch: async (job: Job) => ((elapsedMs += 3_000), dispatcher.dispatch(job)) };
    const deps: SweepDeps = { sql: resultLimited(db, 10), dispatcher: slow, webhooks: new Map(), retry, log: quiet, batch: 10, remainingMs: () => 30_000 - elapsedMs };
    // One batch marked (30 s left); its sends stop with less than a send's reserve left, the rest of it taken back.
    const first = await sweep(deps, now);
    // Sends start with 30, 27, ... 9 s left, each with a send's reserve in hand; the last ends with 6 s to spare.
    const sentIn = 8;
    expect(sendReserveMs).toBeLessThanOrEqual(9_000);
    expect(first).toMatchObject({ redispatched: sentIn });
    expect(sent).toHaveLength(sentIn);
    expect(30_000 - elapsedMs).toBe(6_000);
    expect(await statesOf("3ke")).toEqual([
      { status: "pending", reason: null, redispatched: false, n: 25 - sentIn },
      { status: "pending", reason: null, redispatched: true, n: sentIn },
    ]);
    const marked = await db.query<{ rkey: string }>(`SELECT rkey FROM post_stages WHERE rkey LIKE '3ke%' AND redispatched ORDER BY rkey`, []);
    expect(marked.map((r) => r.rkey)).toEqual(sent.map((j) => j.postId).sort());
    // With less than the margin left no batch is marked at all.
    expect(await sweep({ ...deps, remainingMs: () => markMarginMs - 1 }, new Date(now.getTime() + 30_000))).toMatchObject({ redispatched: 0 });
    expect(sent).toHaveLength(sentIn);
    // The next run, with its time, sends the rest; a lapse after that times out only stages that were sent.
    expect(await sweep({ ...deps, dispatcher, remainingMs: undefined }, new Date(now.getTime() + 60_000))).toMatchObject({ redispatched: 25 - sentIn });
    expect(new Set(sent.map((j) => j.postId)).size).toBe(25);
    expect(await sweep({ ...deps, dispatcher }, new Date(now.getTime() + pendingLapseMs + 2 * 60_000))).toMatchObject({ redispatched: 0, timedOut: 25 });
  });

  it.runIf(backend.name.startsWith("rds-data"))(
    "a backlog of 30,000 lapsed stages, past the Data API's 1 MiB a result, is dispatched again whole at the real batch",
    async () => {
      const now = new Date(Date.now() + 6 * 60 * 60_000);
      await lostJobs("3kd", 7500, ["denoise", "trim", "transcribe", "waveform"], now);
      const { sent, dispatcher } = recording();
      const deps: SweepDeps = { sql: db, dispatcher, webhooks: new Map(), retry, log: quiet };
      expect(await sweep(deps, now)).toMatchObject({ redispatched: 7500, timedOut: 0 });
      expect(new Set(sent.map((j) => j.postId)).size).toBe(7500);
      expect(await sweep(deps, new Date(now.getTime() + pendingLapseMs + 60_000))).toMatchObject({ redispatched: 0, timedOut: 30_000 });
      expect(sent).toHaveLength(7500);
    },
    120_000,
  );

  it.runIf(backend.name.startsWith("rds-data"))(
    "a batch of timeouts whose webhook events together pass the Data API's 64 KB a row settles, and each event is delivered",
    async () => {
      const now = new Date(Date.now() + 12 * 60 * 60_000);
      await lostJobs("3kf", 200, ["trim", "transcribe", "waveform"], now);
      const receiver = await startWebhookReceiver();
      try {
        const { dispatcher } = recording();
        const deps: SweepDeps = { sql: db, dispatcher, webhooks: new Map([["alpha", { url: receiver.url, secret: "s".repeat(32) }]]), retry, log: quiet };
        expect(await sweep(deps, now)).toMatchObject({ redispatched: 200 });
        // 600 events of about 220 bytes: one row of them all would be 130 KB.
        expect(await sweep(deps, new Date(now.getTime() + pendingLapseMs + 60_000))).toMatchObject({ timedOut: 600 });
        expect(await statesOf("3kf")).toEqual([{ status: "failed", reason: "timeout", redispatched: true, n: 600 }]);
        // At least once each (an attempt answered late on a loaded machine is sent again; receivers dedupe).
        expect(new Set(receiver.received.map((hook) => `${hook.json.postId}/${hook.json.stage}`)).size).toBe(600);
      } finally {
        await receiver.close();
      }
    },
    120_000,
  );
});
