/**
 * A thread's replies play at one loudness after normalize (docs/decisions.md#loudness): on the Node host with the
 * real rendition service, replies recorded at levels 30 LU apart, in different families, come back through their
 * playback URLs at their targets (-19 LUFS mono, -16 LUFS stereo, at most -1 dBTP) as the independent meter reads
 * them, and each view's `embed.loudness` describes the bytes it serves and the upload before it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFsBlobStore } from "../core/blobs/fs-blob-store";
import { createLogger } from "../core/observability/logger";
import type { AcceptedMimeType } from "../core/records/accepted-types";
import { parseRenditionConfig } from "../core/rendition/rendition-config";
import { type RunningRendition, startRendition } from "../core/rendition/rendition-node-root";
import { backends } from "./support/databases";
import { type CorpusClip, loudnessCorpus, makeCorpusClip } from "./support/loudness-corpus";
import { meterLoudness } from "./support/loudness-meter";
import { multipartBody } from "./support/multipart-body";
import { createPost, strongRef } from "./support/post-bodies";
import { startTestService, type TestService } from "./support/test-service";

const renditionToken = "thread-rendition-token-00000000000000000000000";
const logger = createLogger("silent");
const speech = loudnessCorpus.find((clip) => clip.name === "very quiet speech, mono wav")!.exprs[0]!;

/** One voice at four levels 30 LU apart, as four replies would arrive. */
const replies: (CorpusClip & { actor: string })[] = [
  { actor: "quiet", name: "quiet", mimeType: "audio/webm", channels: 1, sampleRate: 48000, exprs: [speech], gainDb: -30, seconds: 5 },
  { actor: "middle", name: "middle", mimeType: "audio/m4a", channels: 1, sampleRate: 44100, exprs: [speech], gainDb: -12, seconds: 5 },
  { actor: "loud", name: "loud", mimeType: "audio/wav", channels: 1, sampleRate: 48000, exprs: [`clip(3*${speech},-1,1)`], gainDb: 0, seconds: 5 },
  { actor: "stereo", name: "stereo", mimeType: "audio/mpeg", channels: 2, sampleRate: 44100, exprs: [speech, speech], gainDb: -20, seconds: 5 },
];

const targetOf = (channels: number) => (channels === 1 ? -19 : -16);

describe.each(backends)("a thread's replies at one loudness on $name", (backend) => {
  let dir: string;
  let rendition: RunningRendition;
  let svc: TestService;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "loudness-thread-"));
    const config = parseRenditionConfig({ SVC_BLOB_DIR: dir, RENDITION_SERVICE_TOKEN: renditionToken, RENDITION_PORT: "0" }, logger);
    rendition = await startRendition(config, logger, { store: createFsBlobStore(dir) });
    svc = await startTestService({
      driver: "node",
      sql: backend.open,
      blobs: createFsBlobStore(dir),
      env: { SVC_PROCESSING_INLINE: "true", SVC_RENDITION_SERVICE_URL: rendition.url, RENDITION_SERVICE_TOKEN: renditionToken },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await rendition?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const upload = async (actor: string, bytes: Buffer, mimeType: AcceptedMimeType) => {
    const { body, contentType } = await multipartBody([{ name: "file", bytes, type: mimeType }]);
    const uploaded = await svc.post("/api/v1/audio/upload", { actor, body, headers: { "content-type": contentType } });
    expect(uploaded.status, uploaded.body.toString()).toBe(201);
    return uploaded.json.data.blob;
  };

  it("replies uploaded 30 LU apart play within 1 LU of their targets after normalize, and the view says so", async () => {
    const prompt = await createPost(svc, "host", { text: "how was your day?" });
    const root = strongRef(prompt);

    const inputs = new Map<string, number>();
    for (const reply of replies) {
      const bytes = await makeCorpusClip(reply);
      inputs.set(reply.actor, (await meterLoudness(bytes)).integratedLufs);
      const blob = await upload(reply.actor, bytes, reply.mimeType);
      const created = await svc.post("/api/v1/posts", {
        actor: reply.actor,
        json: { text: "", embed: { $type: "dev.svc.embed.audio", audio: blob }, reply: { root, parent: root }, processing: { normalize: true } },
      });
      expect(created.status, created.body.toString()).toBe(201);
    }
    const offsets = replies.map((r) => inputs.get(r.actor)! - targetOf(r.channels));
    expect(Math.max(...offsets) - Math.min(...offsets)).toBeGreaterThan(25);

    const thread = await svc.get(`/api/v1/posts/${prompt.uri.split("/").pop()}/replies?limit=10`, { actor: "host" });
    expect(thread.status).toBe(200);
    expect(thread.json.data.items).toHaveLength(replies.length);
    for (const [i, item] of (thread.json.data.items as any[]).entries()) {
      const reply = replies[i]!;
      expect(item.processing.normalize, reply.actor).toMatchObject({ status: "ready" });
      expect(item.embed.mimeType).toBe(reply.mimeType);
      const played = await svc.get(item.embed.url.slice(svc.baseUrl.length), { token: null });
      expect(played.status).toBe(200);
      const heard = await meterLoudness(played.body);
      expect(heard.channels).toBe(reply.channels);
      expect(Math.abs(heard.integratedLufs - targetOf(reply.channels)), reply.actor).toBeLessThanOrEqual(1);
      expect(heard.truePeakDbtp, reply.actor).toBeLessThanOrEqual(-1);
      expect(item.embed.loudness.integratedLufs).toBeCloseTo(heard.integratedLufs, 1);
      expect(item.embed.loudness.truePeakDbtp).toBeCloseTo(heard.truePeakDbtp, 1);
      expect(item.embed.loudness.before.integratedLufs).toBeCloseTo(inputs.get(reply.actor)!, 1);
    }
  });
});
