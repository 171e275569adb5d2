import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { allStages, testLoudness, startEnrichmentHarness, testProviders, type EnrichmentHarness } from "../../test/support/enrichment-harness";
import { ProviderError } from "../providers/provider-port";
import { findPost } from "../posts/post-store";
import { failPendingStages } from "./dead-letter";
import { runPass } from "./run-pass";
import { onRequest, canSettle, onBytesChanged } from "./stage-state";

describe("the stage state machine (docs/decisions.md#processing)", () => {
  it("a request queues a stage that is not pending, and changes nothing on a pending one", () => {
    expect(onRequest(undefined, { stage: "trim", status: "pending" })).toEqual({ stage: "trim", status: "pending" });
    expect(onRequest("ready", { stage: "trim", status: "pending" })).toEqual({ stage: "trim", status: "pending" });
    expect(onRequest("pending", { stage: "trim", status: "pending" })).toBeNull();
  });
  it("only a pending stage settles", () => {
    expect(["pending", "ready", "failed", "skipped", undefined].map((s) => canSettle(s as never))).toEqual([true, false, false, false, false]);
  });
  it("new bytes send the ready stages that describe them (derived stages, and normalize) back to pending, and nothing else", () => {
    expect(onBytesChanged("trim", "transcribe", "ready")).toBe("pending");
    expect(onBytesChanged("trim", "waveform", "ready")).toBe("pending");
    expect(onBytesChanged("trim", "transcribe", "failed")).toBe("failed");
    expect(onBytesChanged("denoise", "trim", "ready")).toBe("ready");
    // normalize's figures describe the bytes: new bytes from an earlier stage recompute it, its own do not.
    expect(onBytesChanged("trim", "normalize", "ready")).toBe("pending");
    expect(onBytesChanged("normalize", "normalize", "ready")).toBe("ready");
    expect(onBytesChanged("normalize", "waveform", "ready")).toBe("pending");
  });
});

describe.each(backends)("the worker pass on $name", (backend) => {
  let h: EnrichmentHarness;
  let providers: ReturnType<typeof testProviders>;
  beforeAll(async () => {
    providers = testProviders();
    h = await startEnrichmentHarness(backend, { registry: providers.registry });
  });
  afterAll(() => h?.close());

  const job = (postId: string) => ({ appId: "alpha", postId });

  it("runs denoise -> trim -> normalize -> transcribe, waveform, each byte-changing stage on the previous one's output", async () => {
    const post = await h.createAudioPost(allStages);
    expect(await runPass(h.pass, job(post.postId))).toEqual({ kind: "done", ran: true });
    const calls = providers.calls.filter((c) => c.stage && true).slice(-5);
    expect(calls.map((c) => c.stage)).toEqual(["denoise", "trim", "normalize", "transcribe", "waveform"]);
    expect(calls[0]!.cid).toBe(post.blob.ref.$link);
    expect(calls[1]!.cid).not.toBe(calls[0]!.cid);
    expect(calls[2]!.cid).not.toBe(calls[1]!.cid);
    expect(calls[3]!.cid).toBe(calls[4]!.cid);
    expect(calls[3]!.cid).not.toBe(calls[2]!.cid);
    // Each provider is told what the pass runs after it (the rendition trimmer measures for a normalize that follows).
    expect(calls.map((c) => c.then)).toEqual([["trim", "normalize", "transcribe", "waveform"], ["normalize", "transcribe", "waveform"], ["transcribe", "waveform"], ["waveform"], []]);
    const states = await h.stages(post.postId);
    expect(Object.values(states).map((s) => s.status)).toEqual(["ready", "ready", "ready", "ready", "ready"]);
  });

  it("a pass that changes the bytes builds the mp3 rendition of the bytes it leaves, once, before the first playback asks; one that changes nothing builds none", async () => {
    const built: string[] = [];
    const renditions = { buildMp3: async (source: { cid: string }) => void built.push(source.cid) };
    const post = await h.createAudioPost({ trim: true, normalize: true, waveform: true });
    await runPass({ ...h.pass, renditions }, job(post.postId));
    const last = providers.calls.at(-1)!;
    expect(last.stage).toBe("waveform");
    expect(built).toEqual([last.cid]);
    expect(last.cid).not.toBe(post.blob.ref.$link);
    const waveformOnly = await h.createAudioPost({ waveform: true });
    await runPass({ ...h.pass, renditions }, job(waveformOnly.postId));
    expect(built).toHaveLength(1);
  });

  it("each stage's log line says how long its provider and its settling took, and the job's line how long the lease took", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = { ...h.pass.log, info: (message: string, fields?: object) => void lines.push({ message, ...fields }) };
    const post = await h.createAudioPost({ trim: true, waveform: true });
    const annotated: Record<string, unknown> = {};
    await runPass({ ...h.pass, log }, job(post.postId), { annotate: (fields) => Object.assign(annotated, fields) });
    expect(annotated).toEqual({ leaseMs: expect.any(Number) });
    const settled = lines.filter((l) => l.message === "stage settled" && l.postId === post.postId);
    expect(settled.map((l) => l.stage)).toEqual(["trim", "waveform"]);
    for (const line of settled) expect(line).toMatchObject({ providerMs: expect.any(Number), settleMs: expect.any(Number) });
  });

  it("the view describes the processed variant (url, mimeType, size) and the original stays stored", async () => {
    const post = await h.createAudioPost({ trim: true });
    await runPass(h.pass, job(post.postId));
    const row = (await findPost(h.sql, "alpha", post.postId))!;
    expect(row.variant?.cid).toBeDefined();
    expect(row.variant!.cid).not.toBe(post.blob.ref.$link);
    expect(row.variant!.size).toBeGreaterThan(post.blob.size);
    expect(row.variant!.mimeType).toBe("audio/wav");
    expect(await h.blobs.stat(`blobs/alpha/${post.blob.ref.$link}`)).not.toBeNull();
    expect(await h.blobs.stat(`blobs/alpha/${row.variant!.cid}`)).not.toBeNull();
  });

  it("a byte-changing rerun sends ready derived stages back to pending and they settle ready again (a second webhook)", async () => {
    const post = await h.createAudioPost({ transcribe: true, waveform: true });
    await runPass(h.pass, job(post.postId));
    const firstTranscript = (await findPost(h.sql, "alpha", post.postId))!.transcript!;
    await h.request(post.postId, { denoise: true });
    await runPass(h.pass, job(post.postId));
    const states = await h.stages(post.postId);
    expect(states.transcribe).toMatchObject({ status: "ready", generation: 2 });
    expect(states.waveform).toMatchObject({ status: "ready", generation: 2 });
    const row = (await findPost(h.sql, "alpha", post.postId))!;
    expect(row.transcript!.text).not.toBe(firstTranscript.text);
    expect(row.transcript!.subject.uri).toBe(`at://did:web:alpha.test/dev.svc.audio.post/${post.postId}`);
    expect(Number((await h.sql.query(`SELECT count(*) AS n FROM transcripts WHERE rkey = $1`, [post.postId]))[0]!.n)).toBe(1);
    const events = await h.events(post.postId);
    expect(events.filter((e) => e.stage === "transcribe" && e.status === "ready")).toHaveLength(2);
    expect(events.filter((e) => e.stage === "waveform" && e.status === "ready")).toHaveLength(2);
  });

  it("normalize stores its variant with the loudness of it and of the bytes before, and sends ready derived stages back to pending (a second webhook)", async () => {
    const post = await h.createAudioPost({ waveform: true });
    await runPass(h.pass, job(post.postId));
    await h.request(post.postId, { normalize: true });
    await runPass(h.pass, job(post.postId));
    const row = (await findPost(h.sql, "alpha", post.postId))!;
    expect(row.loudness).toEqual(testLoudness);
    expect(row.variant!.cid).toBe(providers.calls.filter((c) => c.stage === "waveform").at(-1)!.cid);
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "ready", generation: 2 });
    const events = await h.events(post.postId);
    expect(events.filter((e) => e.stage === "normalize").map((e) => e.status)).toEqual(["ready"]);
    expect(events.filter((e) => e.stage === "waveform").map((e) => e.status)).toEqual(["ready", "ready"]);
  });

  it("normalize that leaves the bytes as they were stores its figures and reruns nothing downstream", async () => {
    const same = testProviders({ changeBytes: false });
    const pass = { ...h.pass, providers: same.registry };
    const post = await h.createAudioPost({ waveform: true });
    await runPass(pass, job(post.postId));
    await h.request(post.postId, { normalize: true });
    await runPass(pass, job(post.postId));
    const row = (await findPost(h.sql, "alpha", post.postId))!;
    expect(row.loudness).toEqual(testLoudness);
    expect(row.variant).toBeNull();
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "ready", generation: 1 });
  });

  it("an earlier stage that rewrites normalized bytes clears their loudness and normalizes again", async () => {
    const post = await h.createAudioPost({ normalize: true });
    await runPass(h.pass, job(post.postId));
    await h.request(post.postId, { trim: true });
    await runPass(h.pass, job(post.postId));
    const states = await h.stages(post.postId);
    expect(states.normalize).toMatchObject({ status: "ready", generation: 2 });
    const calls = providers.calls.filter((c) => c.stage === "trim" || c.stage === "normalize").slice(-2);
    expect(calls.map((c) => c.stage)).toEqual(["trim", "normalize"]);
    const row = (await findPost(h.sql, "alpha", post.postId))!;
    expect(row.loudness).toEqual(testLoudness);
    expect(row.variant!.cid).not.toBe(calls[1]!.cid);
  });

  it("bytes that do not change leave derived stages alone", async () => {
    const same = testProviders({ changeBytes: false });
    const pass = { ...h.pass, providers: same.registry };
    const post = await h.createAudioPost({ transcribe: true });
    await runPass(pass, job(post.postId));
    await h.request(post.postId, { trim: true });
    await runPass(pass, job(post.postId));
    expect((await h.stages(post.postId)).transcribe).toMatchObject({ status: "ready", generation: 1 });
  });

  it("requesting a settled stage runs it again; requesting a pending one changes nothing and asks for no job", async () => {
    const post = await h.createAudioPost({ waveform: true });
    expect((await h.request(post.postId, { waveform: true })).pending).toBe(false);
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "pending", generation: 1 });
    await runPass(h.pass, job(post.postId));
    expect((await h.request(post.postId, { waveform: true })).pending).toBe(true);
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "pending", generation: 2 });
    await runPass(h.pass, job(post.postId));
    expect((await h.stages(post.postId)).waveform).toMatchObject({ status: "ready", generation: 2 });
  });

  it("a PATCH while a pass holds the lease is picked up by that pass before it lets go", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated = testProviders({ gate: { transcribe: gate } });
    const pass = { ...h.pass, providers: gated.registry };
    const post = await h.createAudioPost({ transcribe: true });
    const running = runPass(pass, job(post.postId));
    await expect.poll(() => gated.count("transcribe")).toBe(1);
    await h.request(post.postId, { waveform: true });
    expect(await runPass(pass, job(post.postId))).toEqual({ kind: "busy" });
    open();
    expect(await running).toEqual({ kind: "done", ran: true });
    const states = await h.stages(post.postId);
    expect(states.transcribe!.status).toBe("ready");
    expect(states.waveform!.status).toBe("ready");
  });

  it("a settle lands only under the lease: a pass whose lease was taken over settles nothing", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated = testProviders({ gate: { waveform: gate } });
    const post = await h.createAudioPost({ waveform: true });
    const running = runPass({ ...h.pass, providers: gated.registry }, job(post.postId));
    await expect.poll(() => gated.count("waveform")).toBe(1);
    await h.sql.query(`UPDATE post_enrichment SET lease_token = 'stolen' WHERE rkey = $1`, [post.postId]);
    open();
    expect(await running).toEqual({ kind: "busy" });
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    expect(await h.events(post.postId)).toEqual([]);
  });

  it("a redelivered job creates no duplicate artifact and no duplicate event", async () => {
    const post = await h.createAudioPost(allStages);
    const [a, b] = await Promise.all([runPass(h.pass, job(post.postId)), runPass(h.pass, job(post.postId))]);
    expect([a, b]).toContainEqual({ kind: "done", ran: true });
    expect(await runPass(h.pass, job(post.postId))).toEqual({ kind: "done", ran: false });
    const events = await h.events(post.postId);
    expect(events.map((e) => `${e.stage}:${e.status}`).sort()).toEqual(["denoise:ready", "normalize:ready", "transcribe:ready", "trim:ready", "waveform:ready"]);
    expect(Number((await h.sql.query(`SELECT count(*) AS n FROM transcripts WHERE rkey = $1`, [post.postId]))[0]!.n)).toBe(1);
  });

  it("new bytes take the old transcript and waveform off the post: none is shown while they recompute, or after a recompute that fails", async () => {
    const failingLater = testProviders({
      fail: {
        transcribe: (n) => (n >= 2 ? new ProviderError("fail", "bad audio") : undefined),
        waveform: (n) => (n >= 2 ? new ProviderError("fail", "bad audio") : undefined),
      },
    });
    const pass = { ...h.pass, providers: failingLater.registry };
    const post = await h.createAudioPost({ transcribe: true, waveform: true });
    await runPass(pass, job(post.postId));
    let row = (await findPost(h.sql, "alpha", post.postId))!;
    expect(row.transcript).not.toBeNull();
    expect(row.waveform).not.toBeNull();
    await h.request(post.postId, { trim: true });
    await runPass(pass, job(post.postId));
    const states = await h.stages(post.postId);
    expect(states.trim!.status).toBe("ready");
    expect(states.transcribe).toMatchObject({ status: "failed", reason: "provider_error" });
    expect(states.waveform).toMatchObject({ status: "failed", reason: "provider_error" });
    row = (await findPost(h.sql, "alpha", post.postId))!;
    expect(row.variant).not.toBeNull();
    expect(row.transcript).toBeNull();
    expect(row.waveform).toBeNull();
  });

  it("a provider failure settles the stage failed (provider_error) and writes exactly one failed event for it; a retry request leaves it pending, with no event, until the last attempt", async () => {
    const failing = testProviders({
      fail: {
        transcribe: () => new ProviderError("fail", "bad audio"),
        waveform: () => new ProviderError("retry", "busy upstream"),
      },
    });
    const pass = { ...h.pass, providers: failing.registry };
    const post = await h.createAudioPost({ transcribe: true, waveform: true });
    expect(await runPass(pass, job(post.postId))).toEqual({ kind: "retry" });
    let states = await h.stages(post.postId);
    expect(states.transcribe).toMatchObject({ status: "failed", reason: "provider_error" });
    expect(states.waveform!.status).toBe("pending");
    // The failed settle sends its one webhook event; the stage left pending sends none (pending never fires).
    const settles = async () => (await h.events(post.postId)).map((e) => ({ stage: e.stage, status: e.status }));
    expect(await settles()).toEqual([{ stage: "transcribe", status: "failed" }]);
    expect(await runPass(pass, job(post.postId), { finalAttempt: true })).toEqual({ kind: "done", ran: true });
    states = await h.stages(post.postId);
    expect(states.waveform).toMatchObject({ status: "failed", reason: "provider_error" });
    expect(await settles()).toEqual([{ stage: "transcribe", status: "failed" }, { stage: "waveform", status: "failed" }]);
  });

  it("a dead-lettered job settles its pending stages failed (dead_letter), with their events", async () => {
    const post = await h.createAudioPost({ trim: true, waveform: true });
    const events = await failPendingStages(h.sql, job(post.postId), "dead_letter", new Date(), true);
    expect(events.map((e) => e.status)).toEqual(["failed", "failed"]);
    const states = await h.stages(post.postId);
    expect(states.trim).toMatchObject({ status: "failed", reason: "dead_letter" });
    expect(states.waveform).toMatchObject({ status: "failed", reason: "dead_letter" });
  });

  it("the pass reads time from its clock only: a deadline its clock has passed starts no stage, and is retried", async () => {
    const post = await h.createAudioPost({ waveform: true });
    const later = Date.parse("2100-01-01T00:00:00Z");
    const before = providers.count("waveform");
    const pass = { ...h.pass, now: () => new Date(later) };
    expect(await runPass(pass, job(post.postId), { deadline: later + 1_000 })).toEqual({ kind: "retry" });
    expect(providers.count("waveform")).toBe(before);
    expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    expect(await runPass(pass, job(post.postId), { deadline: later + 60_000 })).toEqual({ kind: "done", ran: true });
  });

  it("a job for a post that does not exist is done with nothing to run", async () => {
    expect(await runPass(h.pass, job("3kabcdefghijk"))).toEqual({ kind: "done", ran: false });
  });
});
