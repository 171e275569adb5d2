import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audioFixture } from "./support/audio-fixtures";
import { type Chromium, launchChromium } from "./support/chromium";
import { backends } from "./support/databases";
import { multipartBody } from "./support/multipart-body";
import { startTestService, type TestService } from "./support/test-service";

interface AudioRequest {
  status: number;
  bytes: number;
  done: Promise<void>;
}

/**
 * The service's public address as a browser meets it: a front that serves the player page (as a tenant's app would,
 * from a fresh read of the post) and passes every other request to the service, counting the playback requests and
 * the audio bytes each one carried.
 */
async function startFront(target: () => string, player: () => Promise<string>) {
  const audio: AudioRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.url === "/player") return void res.writeHead(200, { "content-type": "text/html", "cache-control": "no-store" }).end(await player());
    const counted = req.url!.startsWith("/api/v1/audio?");
    const entry: AudioRequest = { status: 0, bytes: 0, done: Promise.resolve() };
    if (counted) audio.push(entry);
    entry.done = new Promise((resolve) => {
      const upstream = request(new URL(req.url!, target()), { method: req.method, headers: req.headers }, (answer) => {
        entry.status = answer.statusCode!;
        res.writeHead(answer.statusCode!, answer.headers);
        answer.on("data", (chunk: Buffer) => (entry.bytes += chunk.length));
        answer.pipe(res);
        answer.on("end", () => resolve());
      });
      req.pipe(upstream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    audio,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("playback in a browser", () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  let svc: TestService;
  let browser: Chromium;
  let bytes: Buffer;
  let postId: string;
  const boundary = Math.floor(Date.now() / 900_000) * 900;
  let clock = (boundary + 1) * 1000;
  const served: string[] = [];

  const player = async () => {
    const url: string = (await svc.get(`/api/v1/posts/${postId}`, { actor: "listener" })).json.data.embed.url;
    served.push(url);
    return `<!doctype html><audio id="player" preload="auto" src="${url.replaceAll("&", "&amp;")}"></audio>`;
  };

  beforeAll(async () => {
    front = await startFront(() => svc.baseUrl, player);
    svc = await startTestService({
      driver: "node",
      sql: backends[0]!.open,
      now: () => new Date(clock),
      configure: (env) => (env.SVC_PUBLIC_BASE_URL = front.url),
    });
    bytes = (await audioFixture("audio/ogg")).bytes;
    const { body, contentType } = await multipartBody([{ name: "file", bytes, type: "audio/ogg" }]);
    const { blob } = (await svc.post("/api/v1/audio/upload", { actor: "listener", body, headers: { "content-type": contentType } })).json.data;
    const created = await svc.post("/api/v1/posts", { actor: "listener", json: { text: "", embed: { $type: "dev.svc.embed.audio", audio: blob } } });
    postId = created.json.data.postId;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    await front?.close();
  });

  it("a page with an <audio> of the embed.url, loaded twice within a window, fetches the audio bytes once", async () => {
    const page = await browser.context.newPage();
    const loadFully = async () => {
      await page.goto(`${front.url}/player`);
      // HAVE_ENOUGH_DATA, and the whole clip buffered: every byte the element wants has arrived.
      await page.waitForFunction(() => {
        const audio = document.getElementById("player") as HTMLAudioElement;
        return audio.readyState === 4 && audio.buffered.length > 0 && audio.buffered.end(0) >= audio.duration - 0.05;
      });
      await Promise.all(front.audio.map((r) => r.done));
    };

    await loadFully();
    const first = front.audio.length;
    expect(first).toBeGreaterThan(0);
    expect(front.audio.reduce((sum, r) => sum + r.bytes, 0)).toBe(bytes.length);

    clock += 600_000;
    await loadFully();
    expect(served[1]).toBe(served[0]);
    const again = front.audio.slice(first);
    // Served from the browser's cache: no request at all, or only revalidations answered 304 without bytes.
    expect(again.every((r) => r.status === 304 && r.bytes === 0), JSON.stringify(again)).toBe(true);
    expect(front.audio.reduce((sum, r) => sum + r.bytes, 0)).toBe(bytes.length);
  });
});
