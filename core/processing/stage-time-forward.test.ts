/**
 * A stage's updatedAt moves forward on every transition, and a settle's event carries that time as its occurredAt
 * (docs/decisions.md#processing: a receiver keeps the latest event per stage). Each writer reads its clock before its
 * statement, and clocks differ between hosts: a PATCH whose clock was read before a pass settled the stage, or a pass
 * whose clock is behind the request's, must still move the stage's time forward.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { startEnrichmentHarness, testProviders, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { failPendingStages } from "./dead-letter";
import { acquireLease, releaseLease } from "./lease";
import { storeVariant } from "./pass-store";
import { requestStagesIfAuthor } from "./request-stages";
import { runPass } from "./run-pass";

describe.each(backends)("a stage's time moves forward on every transition on $name", (backend) => {
  let h: EnrichmentHarness;
  beforeAll(async () => {
    h = await startEnrichmentHarness(backend, { registry: testProviders().registry });
  });
  afterAll(() => h?.close());

  const stageAt = async (postId: string, stage: string) =>
    new Date(
      (await h.sql.query<{ updated_at: Date }>(`SELECT updated_at FROM post_stages WHERE app_id = 'alpha' AND rkey = $1 AND stage = $2`, [
        postId,
        stage,
      ]))[0]!.updated_at,
    ).getTime();
  const eventTimes = async (postId: string, stage: string, status: string) =>
    (
      await h.sql.query<{ occurred_at: Date }>(
        `SELECT occurred_at FROM webhook_events WHERE app_id = 'alpha' AND rkey = $1 AND stage = $2 AND status = $3 ORDER BY occurred_at`,
        [postId, stage, status],
      )
    ).map((e) => new Date(e.occurred_at).getTime());
  const job = (postId: string) => ({ appId: "alpha", postId });

  it("a request whose clock was read before a pass settled the stage ready later moves it to pending, or skipped with its event, after the settle", async () => {
    for (const status of ["pending", "skipped"] as const) {
      const start = Date.now();
      h.setClock(start);
      const post = await h.createAudioPost({ waveform: true });
      h.setClock(start + 10_000);
      expect(await runPass(h.pass, job(post.postId))).toEqual({ kind: "done", ran: true });
      const settled = await stageAt(post.postId, "waveform");
      expect(settled).toBe(start + 10_000);
      // The PATCH read its clock at start + 5 s; its statement lands after the settle.
      const request = await requestStagesIfAuthor(h.sql, {
        appId: "alpha",
        rkey: post.postId,
        actor: "author",
        decisions: [status === "pending" ? { stage: "waveform", status } : { stage: "waveform", status, reason: "no_provider" }],
        now: new Date(start + 5_000),
        webhooks: true,
      });
      h.setClock(undefined);
      expect((await h.stages(post.postId)).waveform!.status).toBe(status);
      const updated = await stageAt(post.postId, "waveform");
      expect(updated).toBeGreaterThan(settled);
      if (status === "skipped") {
        expect(request.events.map((e) => Date.parse(e.occurredAt))).toEqual([updated]);
        expect(await eventTimes(post.postId, "waveform", "skipped")).toEqual([updated]);
      }
    }
  });

  it("a pass whose clock is behind the request that queued the stage settles it after that request, its event at the stage's time", async () => {
    const start = Date.now();
    h.setClock(start + 60_000);
    const post = await h.createAudioPost({ waveform: true });
    const queued = await stageAt(post.postId, "waveform");
    h.setClock(start);
    expect(await runPass(h.pass, job(post.postId))).toEqual({ kind: "done", ran: true });
    h.setClock(undefined);
    const updated = await stageAt(post.postId, "waveform");
    expect(updated).toBeGreaterThan(queued);
    expect(await eventTimes(post.postId, "waveform", "ready")).toEqual([updated]);
  });

  it("new bytes from a pass whose clock is behind send a ready stage back to pending after it was settled", async () => {
    const start = Date.now();
    h.setClock(start + 60_000);
    const post = await h.createAudioPost({ transcribe: true });
    expect(await runPass(h.pass, job(post.postId))).toEqual({ kind: "done", ran: true });
    h.setClock(undefined);
    const settled = await stageAt(post.postId, "transcribe");
    const lease = (await acquireLease(h.sql, "alpha", post.postId, new Date(start), 60_000)) as { token: string };
    const audio = { appId: "alpha", cid: post.blob.ref.$link, mimeType: post.blob.mimeType, size: post.blob.size, durationMs: 500 };
    await h.sql.transaction((tx) => storeVariant(tx, h.blobs, { appId: "alpha", rkey: post.postId, token: lease.token, stage: "trim", audio, now: new Date(start) }));
    await releaseLease(h.sql, "alpha", post.postId, lease.token, new Date(start));
    expect((await h.stages(post.postId)).transcribe!.status).toBe("pending");
    expect(await stageAt(post.postId, "transcribe")).toBeGreaterThan(settled);
  });

  it("a dead letter handled on a clock behind the request that queued the stage fails it after that request, its event at the stage's time", async () => {
    const start = Date.now();
    h.setClock(start + 60_000);
    const post = await h.createAudioPost({ waveform: true });
    h.setClock(undefined);
    const queued = await stageAt(post.postId, "waveform");
    const events = await failPendingStages(h.sql, job(post.postId), "dead_letter", new Date(start), true);
    const updated = await stageAt(post.postId, "waveform");
    expect(updated).toBeGreaterThan(queued);
    expect(events.map((e) => Date.parse(e.occurredAt))).toEqual([updated]);
    expect(await eventTimes(post.postId, "waveform", "failed")).toEqual([updated]);
  });
});
