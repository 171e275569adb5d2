import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waveformOverview } from "../core/posts/waveform-overview";
import type { Waveform } from "../core/records/stage-outputs";
import { replyTo } from "./support/post-bodies";
import { audioPost, noiseWav, seedAudio } from "./support/seeded-audio";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

describe.each(edgeMatrix)("waveforms in lists over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql, env: { SVC_PROCESSING_INLINE: "true", SVC_PROCESSING_STUB: "true" } });
  });
  afterAll(() => svc?.close());

  /** A post whose stub waveform has 20 points a second of `durationMs`; its id and the full waveform as read alone. */
  const postWithWaveform = async (actor: string, durationMs: number, reply?: { uri: string; cid: string }) => {
    const blob = await seedAudio(svc.deps, "alpha", noiseWav(), durationMs);
    const body = { ...audioPost(blob, { waveform: true }), ...(reply && replyTo(reply)) };
    const created = await svc.post("/api/v1/posts", { actor, json: body });
    expect(created.status, created.body.toString()).toBe(201);
    const view = (await svc.get(`/api/v1/posts/${created.json.data.postId}`, { actor })).json.data;
    return { id: created.json.data.postId as string, uri: view.uri as string, cid: view.cid as string, waveform: view.embed.waveform as Waveform };
  };
  const itemOf = (items: { uri: string; embed: { waveform: Waveform } }[], id: string) => items.find((item) => item.uri.endsWith(`/${id}`))!;

  it("GET /api/v1/posts/{postId} carries the full waveform; list items (posts and replies) carry it reduced to at most 256 points", async () => {
    const prompt = await postWithWaveform("wl-1", 120_000);
    expect(prompt.waveform.length).toBe(2400);
    const reply = await postWithWaveform("wl-2", 90_000, prompt);
    expect(reply.waveform.length).toBe(1800);

    const posts = (await svc.get("/api/v1/posts?kind=prompt", { actor: "wl-1" })).json.data.items;
    const listed = itemOf(posts, prompt.id).embed.waveform;
    expect(listed.length).toBeLessThanOrEqual(256);
    expect(listed).toEqual(waveformOverview(prompt.waveform));
    expect(listed.length * listed.samples_per_pixel).toBeGreaterThanOrEqual(prompt.waveform.length * prompt.waveform.samples_per_pixel);

    const replies = (await svc.get(`/api/v1/posts/${prompt.id}/replies`, { actor: "wl-1" })).json.data.items;
    expect(itemOf(replies, reply.id).embed.waveform).toEqual(waveformOverview(reply.waveform));
    expect(itemOf(replies, reply.id).embed.waveform.length).toBeLessThanOrEqual(256);
  });

  it("a clip of fewer than 256 points is listed with its waveform as it is", async () => {
    const short = await postWithWaveform("wl-3", 10_000);
    expect(short.waveform.length).toBe(200);
    const posts = (await svc.get("/api/v1/posts?kind=prompt", { actor: "wl-3" })).json.data.items;
    expect(itemOf(posts, short.id).embed.waveform).toEqual(short.waveform);
  });
});
