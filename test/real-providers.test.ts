/**
 * End to end on the Node host with the real providers: the rendition service beside the service (trim, waveform),
 * ElevenLabs (denoise, transcribe) through a local fake of its API. Upload, create with all four stages, and the
 * view shows the trimmed variant's duration, the transcript and the waveform, with one webhook per settle.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFsBlobStore } from "../core/blobs/fs-blob-store";
import { createLogger } from "../core/observability/logger";
import { parseRenditionConfig } from "../core/rendition/rendition-config";
import { type RunningRendition, startRendition } from "../core/rendition/rendition-node-root";
import { backends } from "./support/databases";
import { type FakeElevenLabs, startFakeElevenLabs } from "./support/fake-elevenlabs";
import { multipartBody } from "./support/multipart-body";
import { decodeSamples, makeClip } from "./support/rendition-fixtures";
import { startTestService, type TestService } from "./support/test-service";
import { startWebhookReceiver } from "./support/webhook-receiver";

const renditionToken = "e2e-rendition-token-000000000000000000000000";
const webhookSecret = "whsec-e2e-secret-0123456789abcdef012345";
const logger = createLogger("silent");

describe.each(backends)("real providers end to end on $name", (backend) => {
  let dir: string;
  let rendition: RunningRendition;
  let elevenlabs: FakeElevenLabs;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let svc: TestService;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "real-providers-"));
    // What the fake's audio isolation answers: the clip, noise removed (1 s silence, 2 s tone, 1 s silence), as mp3.
    elevenlabs = await startFakeElevenLabs({ isolated: await makeClip("audio/mpeg") });
    receiver = await startWebhookReceiver();
    const config = parseRenditionConfig({ SVC_BLOB_DIR: dir, RENDITION_SERVICE_TOKEN: renditionToken, RENDITION_PORT: "0" }, logger);
    rendition = await startRendition(config, logger, { store: createFsBlobStore(dir) });
    svc = await startTestService({
      driver: "node",
      sql: backend.open,
      blobs: createFsBlobStore(dir),
      env: {
        SVC_PROCESSING_INLINE: "true",
        SVC_RENDITION_SERVICE_URL: rendition.url,
        RENDITION_SERVICE_TOKEN: renditionToken,
        ELEVENLABS_API_KEY: elevenlabs.apiKey,
        ELEVENLABS_BASE_URL: elevenlabs.url,
        SVC_APP_WEBHOOK_URLS: `alpha:${receiver.url}`,
        SVC_APP_WEBHOOK_SECRETS: `alpha:${webhookSecret}`,
      },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await rendition?.close();
    await elevenlabs?.close();
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("upload, create with all four stages: every stage ready, the view shows the trimmed duration, transcript and waveform, one webhook per settle", async () => {
    const clip = await makeClip("audio/webm", { noise: true });
    const { body, contentType } = await multipartBody([{ name: "file", bytes: clip, type: "audio/webm" }]);
    const upload = await svc.post("/api/v1/audio/upload", { actor: "e2e", body, headers: { "content-type": contentType } });
    expect(upload.status, upload.body.toString()).toBe(201);
    const blob = upload.json.data.blob;

    const created = await svc.post("/api/v1/posts", {
      actor: "e2e",
      json: { text: "a clip", embed: { $type: "dev.svc.embed.audio", audio: blob }, processing: { denoise: true, trim: true, transcribe: true, waveform: true } },
    });
    expect(created.status, created.body.toString()).toBe(201);
    const postId = created.json.data.postId;

    const view = (await svc.get(`/api/v1/posts/${postId}`, { actor: "e2e" })).json.data;
    for (const stage of ["denoise", "trim", "transcribe", "waveform"]) expect(view.processing[stage], stage).toMatchObject({ status: "ready" });

    // The trimmed variant: 2 s of tone and 150 ms either side, in the upload's family.
    expect(view.embed.mimeType).toBe("audio/webm");
    expect(Math.abs(view.embed.durationMs - 2300)).toBeLessThanOrEqual(150);
    const played = await svc.get(view.embed.url.slice(svc.baseUrl.length), { token: null });
    expect(played.status).toBe(200);
    expect(Math.abs((await decodeSamples(played.body)).length / 48 - 2300)).toBeLessThanOrEqual(150);

    expect(view.embed.transcript).toMatchObject({ text: "Hello there, how are you? (laughter) I'm fine thanks Good.", lang: "en" });
    expect(view.embed.transcript.segments.map((s: { speaker: string; text: string }) => [s.speaker, s.text])).toEqual([
      ["speaker_0", "Hello there, how are you?"],
      ["speaker_1", "I'm fine thanks"],
      ["speaker_0", "Good."],
    ]);
    expect(view.embed.transcript.segments[1]).toMatchObject({
      words: [{ text: "I'm", startMs: 2300, endMs: 2500, confidence: 819 }, { text: "fine" }, { text: "thanks" }],
      events: [{ text: "(laughter)", startMs: 1700, endMs: 2200 }],
    });
    expect(view.embed.waveform).toMatchObject({ version: 2, channels: 1, bits: 8, samples_per_pixel: 2400, sample_rate: 48000 });
    expect(Math.abs(view.embed.waveform.length - 46)).toBeLessThanOrEqual(2);

    expect(elevenlabs.seen.map((r) => r.path).sort()).toEqual(["/v1/audio-isolation", "/v1/speech-to-text"]);

    // Every event of the post has its delivery's outcome recorded: nothing more will arrive.
    const undelivered = async () => (await svc.deps.sql.query(`SELECT event_id FROM webhook_events WHERE rkey = $1 AND outcome IS NULL`, [postId])).length;
    await expect.poll(undelivered, { timeout: 10_000 }).toBe(0);
    const hooks = receiver.received.map((h) => h.json).filter((h) => h.postId === postId);
    expect(hooks.map((h) => `${h.stage}:${h.status}`).sort()).toEqual(["denoise:ready", "transcribe:ready", "trim:ready", "waveform:ready"]);
  });
});
