import { createReadStream } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createS3BlobStore } from "../../core/blobs/s3-blob-store";
import { audioFixture } from "../../test/support/audio-fixtures";
import { startS3Emulator, type S3Emulator } from "../../test/support/s3-emulator";
import { noiseWav } from "../../test/support/seeded-audio";
import type { TestService } from "../../test/support/test-service";
import { acceptedAudioTypes, maxUploadBytes, SvcError, type UploadProgress } from "../src/index";
import { freshActor, recordingClient, startClientService } from "./support/client-harness";

const pathsOf = (requests: { method: string; url: string }[]) => requests.map((r) => `${r.method} ${new URL(r.url).pathname}`);

describe("uploadAudio on the file store (the multipart route)", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startClientService();
  });
  afterAll(() => svc?.close());

  const clientOf = () => recordingClient(svc.baseUrl, svc.tenants.alpha.token);

  it("uploads a Uint8Array, a Blob, a web ReadableStream and a Node stream, each to the same blob", async () => {
    const fixture = await audioFixture("audio/ogg");
    const who = clientOf().client.as(freshActor());
    const blobs = [
      await who.uploadAudio(new Uint8Array(fixture.bytes), { mimeType: "audio/ogg" }),
      await who.uploadAudio(new Blob([new Uint8Array(fixture.bytes)], { type: "audio/ogg" })),
      await who.uploadAudio(new Blob([new Uint8Array(fixture.bytes)]).stream(), { mimeType: "audio/ogg" }),
      await who.uploadAudio(createReadStream(fixture.path), { mimeType: "audio/ogg" }),
    ];
    for (const blob of blobs) expect(blob).toEqual({ ...blobs[0], mimeType: "audio/ogg", size: fixture.bytes.length });
  });

  it("the file store's 404 on the presigned route sends it to the multipart route, where later uploads go straight", async () => {
    const { client, requests } = clientOf();
    const who = client.as(freshActor());
    const wav = (await audioFixture("audio/wav")).bytes;
    await who.uploadAudio(wav, { mimeType: "audio/wav" });
    await client.as(freshActor()).uploadAudio(wav, { mimeType: "audio/wav" });
    expect(pathsOf(requests)).toEqual(["POST /api/v1/audio/uploads", "POST /api/v1/audio/upload", "POST /api/v1/audio/upload"]);
  });

  it("drops the parameters of a type whose base is accepted: MediaRecorder's audio/webm;codecs=opus uploads as audio/webm", async () => {
    const webm = (await audioFixture("audio/webm")).bytes;
    const blob = await clientOf().client.as(freshActor()).uploadAudio(webm, { mimeType: "audio/webm;codecs=opus" });
    expect(blob.mimeType).toBe("audio/webm");
    const fromBlob = await clientOf().client.as(freshActor()).uploadAudio(new Blob([new Uint8Array(webm)], { type: "Audio/WebM; codecs=\"opus\"" }));
    expect(fromBlob.mimeType).toBe("audio/webm");
  });

  it.each(["audio/flac", "video/webm;codecs=opus", "", "audio/webmx"])("refuses %j locally, listing the accepted types, and sends nothing", async (mimeType) => {
    const { client, requests } = clientOf();
    const error = (await client.as(freshActor()).uploadAudio(new Uint8Array(10), { mimeType }).catch((e: unknown) => e)) as SvcError;
    expect(error).toBeInstanceOf(SvcError);
    expect(error).toMatchObject({ status: 400, code: "UNSUPPORTED_MEDIA_TYPE", requestId: null });
    for (const type of acceptedAudioTypes) expect(error.message).toContain(type);
    expect(requests).toEqual([]);
  });

  it("refuses a stream over 25 MiB locally without reading past the limit or sending anything", async () => {
    const { client, requests } = clientOf();
    let read = 0;
    async function* endless() {
      for (;;) {
        read += 1 << 20;
        yield new Uint8Array(1 << 20);
      }
    }
    await expect(client.as(freshActor()).uploadAudio(endless(), { mimeType: "audio/wav" })).rejects.toMatchObject({ code: "FILE_TOO_LARGE", requestId: null });
    expect(read).toBe(maxUploadBytes + (1 << 20));
    expect(requests).toEqual([]);
  });

  it("reports progress as the bytes go out, ending at the whole file", async () => {
    const wav = noiseWav(120_000, 16_000);
    const progress: UploadProgress[] = [];
    const blob = await clientOf().client.as(freshActor()).uploadAudio(new Uint8Array(wav), { mimeType: "audio/wav", onProgress: (p) => progress.push(p) });
    expect(blob.size).toBe(wav.length);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toEqual({ loaded: wav.length, total: wav.length });
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.loaded).toBeGreaterThanOrEqual(progress[i - 1]!.loaded);
  });

  it("an AbortSignal ends the upload with an AbortError, before or during the transfer", async () => {
    const wav = (await audioFixture("audio/wav")).bytes;
    const { client, requests } = clientOf();
    const who = client.as(freshActor());
    await expect(who.uploadAudio(wav, { mimeType: "audio/wav", signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
    expect(requests).toEqual([]);
    const controller = new AbortController();
    const during = who.uploadAudio(wav, {
      mimeType: "audio/wav",
      signal: controller.signal,
      onProgress: ({ loaded }) => loaded > 0 && controller.abort(),
    });
    await expect(during).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("uploadAudio on S3 (the presigned direct flow)", () => {
  let s3: S3Emulator;
  let svc: TestService;
  beforeAll(async () => {
    s3 = await startS3Emulator();
    svc = await startClientService({ blobs: createS3BlobStore({ bucket: s3.bucket, client: s3.client }) });
  });
  afterAll(async () => {
    await svc?.close();
    await s3?.stop();
  });

  it("posts the bytes straight to storage with the presigned POST, without the service token, then completes", async () => {
    const { client, requests } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const mpeg = (await audioFixture("audio/mpeg")).bytes;
    const progress: UploadProgress[] = [];
    const blob = await client.as(freshActor()).uploadAudio(mpeg, { mimeType: "audio/mpeg", onProgress: (p) => progress.push(p) });
    expect(blob).toMatchObject({ $type: "blob", mimeType: "audio/mpeg", size: mpeg.length });
    expect(requests.map((r) => `${r.method} ${r.url.startsWith(s3.endpoint) ? "storage" : new URL(r.url).pathname.replace(/uploads\/[^/]+/, "uploads/{id}")}`)).toEqual([
      "POST /api/v1/audio/uploads",
      "POST storage",
      "POST /api/v1/audio/uploads/{id}/complete",
    ]);
    expect(requests[1]!.headers.get("authorization")).toBeNull();
    expect(progress.at(-1)).toEqual({ loaded: mpeg.length, total: mpeg.length });
  });

  it("a post made from the directly uploaded blob plays: getAudio follows the service's redirect to storage", async () => {
    const { client } = recordingClient(svc.baseUrl, svc.tenants.alpha.token);
    const who = client.as(freshActor());
    const ogg = (await audioFixture("audio/ogg")).bytes;
    const blob = await who.uploadAudio(ogg, { mimeType: "audio/ogg" });
    const { postId } = await who.createPost({ text: "direct", embed: { $type: "dev.svc.embed.audio", audio: blob } });
    const view = await who.getPost(postId);
    const played = await who.getAudio(view.embed!.url);
    expect(played.status).toBe(200);
    expect(Buffer.from(await played.arrayBuffer()).equals(ogg)).toBe(true);
  });
});
