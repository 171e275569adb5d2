import http from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Transform } from "node:stream";
import { createFsBlobStore } from "../core/blobs/fs-blob-store";
import type { BlobStore } from "../core/blobs/blob-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pcmWav } from "./support/audio-fixtures";
import { backends } from "./support/databases";
import { logRecorder } from "./support/log-recorder";
import { multipartBody } from "./support/multipart-body";
import { startTestService, type TestService } from "./support/test-service";

/** GET of `url` on a connection of its own (as a player opens one), reading `bytes` of the body (all by default) before it lets go. */
const play = (url: string, bytes = Infinity) =>
  new Promise<number>((resolve, reject) => {
    const request = http.get(url, { agent: false }, (res) => {
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read >= bytes) {
          request.destroy();
          resolve(read);
        }
      });
      res.on("end", () => resolve(read));
      res.on("error", () => resolve(read));
    });
    request.on("error", reject);
  });

describe("playback whose client closes the connection (the Node host)", () => {
  const log = logRecorder();
  let svc: TestService;
  let url: string;
  const size = 4 * 1024 * 1024;

  beforeAll(async () => {
    // Playback is keyed on the client IP: room for every playback below.
    svc = await startTestService({ driver: "node", sql: backends[0]!.open, logger: log.logger, env: { SVC_LIMIT_PLAYBACK_PER_IP: "1000/1m" } });
    const { body, contentType } = await multipartBody([{ name: "file", bytes: pcmWav(size), type: "audio/wav" }]);
    const uploaded = await svc.post("/api/v1/audio/upload", { actor: "player", body, headers: { "content-type": contentType } });
    expect(uploaded.status).toBe(201);
    const created = await svc.post("/api/v1/posts", { actor: "player", json: { text: "", embed: { $type: "dev.svc.embed.audio", audio: uploaded.json.data.blob } } });
    url = (await svc.get(`/api/v1/posts/${created.json.data.postId}`, { actor: "player" })).json.data.embed.url as string;
  }, 60_000);
  afterAll(() => svc?.close());

  const streamLines = (from: number) => log.lines.slice(from).filter((line) => /response/.test(line.message));

  it("a client that stops reading mid-stream and closes is logged at info, not as a warning", async () => {
    const from = log.lines.length;
    expect(await play(url, 64 * 1024)).toBeLessThan(size);
    await expect.poll(() => streamLines(from).length, { timeout: 5_000 }).toBe(1);
    expect(streamLines(from)[0]).toMatchObject({ level: "info", message: "client closed the connection before the response ended" });
  });

  it("clients that read every byte and close at once never log a warning, however their close races the stream's end", async () => {
    const from = log.lines.length;
    for (let i = 0; i < 100; i++) expect(await play(url)).toBe(size);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(log.lines.slice(from).filter((line) => line.level === "warn")).toEqual([]);
  });
});

describe("playback whose stored bytes fail mid-stream (the Node host)", () => {
  const log = logRecorder();
  let svc: TestService;
  let dir: string;

  afterAll(async () => {
    await svc?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("a body that fails after the headers went out is still a warning, and the client sees the answer cut short", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "failing-store-"));
    const files = createFsBlobStore(dir);
    // The file store, whose reads fail once 64 KiB have gone out (a disk error, a file removed under the reader).
    const failing: BlobStore = Object.assign(Object.create(files) as BlobStore, {
      async read(key: string, range?: Parameters<BlobStore["read"]>[1]) {
        const opened = await files.read(key, range);
        if (!opened) return opened;
        let sent = 0;
        const cut = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            sent += chunk.length;
            done(sent > 64 * 1024 ? new Error("EIO: the disk failed") : null, chunk);
          },
        });
        return { ...opened, stream: opened.stream.pipe(cut) };
      },
    });
    svc = await startTestService({ driver: "node", sql: backends[0]!.open, logger: log.logger, blobs: failing });
    const size = 1024 * 1024;
    const { body, contentType } = await multipartBody([{ name: "file", bytes: pcmWav(size), type: "audio/wav" }]);
    const uploaded = await svc.post("/api/v1/audio/upload", { actor: "player", body, headers: { "content-type": contentType } });
    const created = await svc.post("/api/v1/posts", { actor: "player", json: { text: "", embed: { $type: "dev.svc.embed.audio", audio: uploaded.json.data.blob } } });
    const url = (await svc.get(`/api/v1/posts/${created.json.data.postId}`, { actor: "player" })).json.data.embed.url as string;

    const from = log.lines.length;
    expect(await play(url)).toBeLessThan(size);
    await expect.poll(() => log.lines.slice(from).filter((line) => /response/.test(line.message)).length, { timeout: 5_000 }).toBe(1);
    expect(log.lines.slice(from).find((line) => /response/.test(line.message))).toMatchObject({ level: "warn", message: "response stream failed" });
  }, 60_000);
});
