import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stageNames } from "../../../client/src/index";
import { startFaultProxy, type FaultProxy } from "../../../client/test/support/fault-proxy";
import { createFsBlobStore } from "../../../core/blobs/fs-blob-store";
import { createLogger } from "../../../core/observability/logger";
import { parseRenditionConfig } from "../../../core/rendition/rendition-config";
import { startRendition, type RunningRendition } from "../../../core/rendition/rendition-node-root";
import { backends } from "../../../test/support/databases";
import { startTcpProxy } from "../../../test/support/tcp-proxy";
import { makeClip } from "../../../test/support/rendition-fixtures";
import { startTestService, type TestService } from "../../../test/support/test-service";
import { startTenantApp } from "../tenant-app";
import { webhookHeaders } from "../../../core/webhooks/sign-webhook";
import { launchChromium } from "./chromium";

const screenshots = path.resolve(import.meta.dirname, "../screenshots");
const renditionToken = "tenant-app-rendition-token-0000000000000000";
const webhookSecret = "tenant-app-webhook-secret-000000000000000";
const logger = createLogger("silent");

const listening = async (): Promise<Server> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
};

/**
 * The whole loop a tenant lives through, in a real browser: the service with real processing (the rendition service
 * for trim, waveform and denoise; the stub transcriber), webhooks to the tenant app, the app's page in Chromium with a
 * fake microphone. Playback goes through a recording proxy, so the test sees what the service was asked and answered.
 */
describe("the reference tenant app in headless Chromium", () => {
  let dir: string;
  let rendition: RunningRendition;
  let playback: FaultProxy;
  let svc: TestService;
  let app: Awaited<ReturnType<typeof startTenantApp>>;
  let browser: Browser;
  /** The service's clock, moved on by the later steps to see a page outlive its playback URLs. */
  let serviceClockMs = 0;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tenant-app-"));
    await mkdir(screenshots, { recursive: true });
    const microphone = path.join(dir, "microphone.wav");
    await writeFile(microphone, await makeClip("audio/wav", { lead: 0.3, tone: 2.4, tail: 0.6, noise: true }));
    const blobDir = path.join(dir, "blobs");
    rendition = await startRendition(parseRenditionConfig({ SVC_BLOB_DIR: blobDir, RENDITION_SERVICE_TOKEN: renditionToken, RENDITION_PORT: "0" }, logger), logger, {
      store: createFsBlobStore(blobDir),
    });
    const appListener = await listening();
    const appUrl = `http://127.0.0.1:${(appListener.address() as AddressInfo).port}`;
    let serviceUrl = "";
    playback = await startFaultProxy(() => serviceUrl);
    svc = await startTestService({
      driver: "node",
      sql: backends[0]!.open,
      now: () => new Date(Date.now() + serviceClockMs),
      blobs: createFsBlobStore(blobDir),
      env: {
        SVC_PROCESSING_INLINE: "true",
        SVC_PROCESSING_STUB: "false",
        SVC_RENDITION_SERVICE_URL: rendition.url,
        RENDITION_SERVICE_TOKEN: renditionToken,
        SVC_DENOISER: "rnnoise",
        SVC_TRANSCRIBER: "stub",
        SVC_APP_WEBHOOK_URLS: `alpha:${appUrl}/webhooks`,
        SVC_APP_WEBHOOK_SECRETS: `alpha:${webhookSecret}`,
        // Playback URLs point at the recording proxy in front of the service.
        SVC_PUBLIC_BASE_URL: playback.url,
      },
    });
    serviceUrl = svc.baseUrl;
    app = await startTenantApp({ service: { baseUrl: svc.baseUrl, token: svc.tenants.alpha.token }, webhookSecret, listen: { handle: appListener } });
    browser = await launchChromium(microphone);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await svc?.close();
    await playback?.close();
    await rendition?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What each page asked of the service itself: only playback, never with the token. */
  const serviceCalls: { url: string; authorization?: string }[] = [];

  const signIn = async (name: string): Promise<Page> => {
    const page = await (await browser.newContext()).newPage();
    page.on("request", (request) => {
      if (/^https?:/.test(request.url()) && !request.url().startsWith(app.url)) serviceCalls.push({ url: request.url(), authorization: request.headers().authorization });
    });
    await page.goto(app.url);
    await page.fill("#name", name);
    await page.click("#sign-in button");
    await page.waitForSelector("#app:not([hidden])");
    // Set once: a reload would lose it.
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    return page;
  };

  /** Records from the fake microphone until the page's own clock says 3 s, then posts. */
  const recordAndPost = async (page: Page) => {
    await page.click("#record");
    await page.waitForFunction(() => Number(document.getElementById("elapsed")!.dataset.seconds) >= 3);
    await page.click("#record");
    await page.waitForSelector("#post:not([disabled])");
    await page.click("#post");
    await page.waitForFunction(() => document.getElementById("status")!.textContent === "Posted.");
  };

  const settledLive = (page: Page, author: string) =>
    page.waitForFunction(
      ([who, stages]) => {
        const chips = [...document.querySelectorAll(`article[data-author="${who}"] .stage`)] as HTMLElement[];
        return chips.length === stages.length && chips.every((chip) => chip.dataset.status === "ready" && chip.hasAttribute("data-live"));
      },
      [author, stageNames] as const,
      { timeout: 60_000 },
    );

  // One story in order: each step starts where the one before left the app.
  let alice: Page;
  let bob: Page;
  let carol: Page;
  const aliceAudio = () => alice.evaluate(() => {
    const audio = document.querySelector('article[data-author="alice"] audio') as HTMLAudioElement;
    return { currentTime: audio.currentTime, duration: audio.duration };
  });

  it("a prompt recorded from the microphone appears, and its stages settle through webhook and server-sent events without a reload", async () => {
    alice = await signIn("alice");
    await recordAndPost(alice);
    await alice.waitForSelector('article[data-author="alice"]');
    await settledLive(alice, "alice");
    expect(await alice.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  }, 120_000);

  it("the waveform is drawn from embed.waveform on a canvas", async () => {
    await alice.waitForFunction(() => {
      const host = document.querySelector('article[data-author="alice"] .waveform > div');
      const canvases = [...(host?.shadowRoot?.querySelectorAll("canvas") ?? [])] as HTMLCanvasElement[];
      return canvases.some((canvas) => {
        if (!canvas.width || !canvas.height) return false;
        const pixels = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) return true;
        return false;
      });
    });
  });

  it("the transcript shows under the player, and the captions track made by toWebVTT loads its cues", async () => {
    expect((await alice.locator('article[data-author="alice"] .transcript').textContent())?.trim()).not.toBe("");
    await alice.waitForFunction(() => (document.querySelector('article[data-author="alice"] audio') as HTMLAudioElement).textTracks[0]?.cues?.length! > 0);
  });

  it("the signed embed.url plays, a click on the waveform seeks to the middle, and the service answered a Range request with 206", async () => {
    const card = alice.locator('article[data-author="alice"]');
    await card.locator("button.play").click();
    await alice.waitForFunction(() => (document.querySelector('article[data-author="alice"] audio') as HTMLAudioElement).currentTime > 0.3);
    await card.locator("button.play").click();
    const wave = (await card.locator(".waveform").boundingBox())!;
    await alice.mouse.click(wave.x + wave.width / 2, wave.y + wave.height / 2);
    const { currentTime, duration } = await aliceAudio();
    expect(currentTime / duration).toBeGreaterThan(0.35);
    expect(currentTime / duration).toBeLessThan(0.65);
    const ranged = playback.seen.filter((r) => r.path.startsWith("/api/v1/audio") && r.headers.range);
    expect(ranged.some((r) => r.answered === 206)).toBe(true);
    await alice.screenshot({ path: path.join(screenshots, "1-alice-prompt.png"), fullPage: true });
  });

  it("a second user replies to the prompt, and the reply's stages settle live too", async () => {
    bob = await signIn("bob");
    await bob.locator('article[data-author="alice"] button.reply').click();
    await recordAndPost(bob);
    await bob.waitForSelector('.replies article[data-author="bob"]');
    await settledLive(bob, "bob");
    await bob.screenshot({ path: path.join(screenshots, "2-bob-reply.png"), fullPage: true });
  }, 120_000);

  it("a third user may reply to the prompt, but sees the reply to the branch bob opened disabled, with its reason", async () => {
    carol = await signIn("carol");
    await carol.waitForSelector('article[data-author="bob"]');
    expect(await carol.locator('article[data-author="alice"] > .actions button.reply').isDisabled()).toBe(false);
    const branch = carol.locator('article[data-author="bob"]');
    expect(await branch.locator("button.reply").isDisabled()).toBe(true);
    expect(await branch.locator(".reply-reason").getAttribute("data-reason")).toBe("not_a_participant");
    expect(await branch.locator(".reply-reason").textContent()).toMatch(/author/);
    await carol.screenshot({ path: path.join(screenshots, "3-carol-gated.png"), fullPage: true });
  });

  it("a post is reported posted even when the feed's reload is refused; the feed says when it tries again, and does", async () => {
    // The viewer's reads for the minute spent, as the service answers then: the BFF passes on when to try again.
    let refusals = 1;
    await bob.route("**/api/feed", (route) =>
      refusals-- > 0
        ? route.fulfill({ status: 429, contentType: "application/json", body: JSON.stringify({ error: { code: "RATE_LIMITED", message: "rate limit exceeded", retryAfter: 1 } }) })
        : route.continue(),
    );
    await bob.locator('article[data-author="alice"] > .actions button.reply').click();
    await recordAndPost(bob);
    await bob.waitForFunction(() => /Trying again in 1 s/.test(document.getElementById("feed-status")!.textContent ?? ""));
    await bob.screenshot({ path: path.join(screenshots, "4-bob-feed-refused.png"), fullPage: true });
    await bob.waitForFunction(() => document.querySelectorAll('.replies article[data-author="bob"]').length === 2);
    expect(await bob.locator("#feed-status").textContent()).toBe("");
    expect(await bob.locator("#status").textContent()).toBe("Posted.");
  }, 120_000);

  it("a feed load that fails on the way (a proxy's 502 page) says so and tries again by itself", async () => {
    let failures = 1;
    await bob.route("**/api/feed", (route) =>
      failures-- > 0 ? route.fulfill({ status: 502, contentType: "text/html", body: "<html><body>Bad Gateway</body></html>" }) : route.continue(),
    );
    await bob.reload();
    await bob.waitForFunction(() => /502.*Trying again in 3 s/.test(document.getElementById("feed-status")!.textContent ?? ""));
    await bob.screenshot({ path: path.join(screenshots, "5-bob-feed-502.png") });
    await bob.waitForFunction(() => document.getElementById("feed-status")!.textContent === "" && document.querySelectorAll("article").length > 0, undefined, { timeout: 10_000 });
    await bob.unroute("**/api/feed");
  });

  it("a page left open past its playback URL's hour still plays: the failed load re-reads the post for a fresh URL", async () => {
    // Dave's page renders the feed, but its audio does not load until the service's clock is 90 minutes on, as for
    // a page left open that long before anyone pressed play.
    const page = await (await browser.newContext()).newPage();
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route(`${playback.url}/api/v1/audio**`, async (route) => {
      await released;
      await route.continue();
    });
    await page.goto(app.url);
    await page.fill("#name", "dave");
    await page.click("#sign-in button");
    await page.waitForSelector('article[data-author="alice"] audio');
    const audioSrc = () => (document.querySelector('article[data-author="alice"] audio') as HTMLAudioElement).src;
    const stale = await page.evaluate(audioSrc);
    serviceClockMs = 90 * 60_000;
    release();
    await page.waitForFunction((old) => {
      const audio = document.querySelector('article[data-author="alice"] audio') as HTMLAudioElement;
      return audio.src !== old && audio.readyState >= 1;
    }, stale);
    expect(playback.seen.some((r) => r.path.startsWith("/api/v1/audio") && r.answered === 403)).toBe(true);
    await page.locator('article[data-author="alice"] button.play').click();
    await page.waitForFunction(() => (document.querySelector('article[data-author="alice"] audio') as HTMLAudioElement).currentTime > 0.2);
  });

  /** A settle webhook to the app, as the service sends one. */
  const deliverSettle = async (postId: string, stage: string) => {
    const body = JSON.stringify({ postId, originAppId: "alpha", stage, status: "ready", occurredAt: new Date().toISOString() });
    const sent = await fetch(`${app.url}/webhooks`, { method: "POST", headers: webhookHeaders(webhookSecret, randomUUID(), Math.floor(Date.now() / 1000), body), body });
    expect(sent.status).toBeLessThan(300);
  };

  it("a settle heard while the feed is being read is not lost: the card the stale feed draws reads its post again", async () => {
    const page = await (await browser.newContext()).newPage();
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let postId = "";
    // The feed is read before the settle and answered after it: alice's waveform still pending in it.
    await page.route(`${app.url}/api/feed`, async (route) => {
      const response = await route.fetch();
      const feed = (await response.json()) as { threads: { post: { uri: string; processing: Record<string, { status: string }> } }[] };
      const post = feed.threads.find((t) => t.post.processing?.waveform)!.post;
      postId = post.uri.split("/").pop()!;
      post.processing.waveform!.status = "pending";
      await released;
      await route.fulfill({ response, json: feed });
    });
    // Each settle the page's streams deliver is counted, in the same dispatch as (before) the page's own listener.
    await page.addInitScript(() => {
      const heard = window as unknown as { settlesHeard: number };
      heard.settlesHeard = 0;
      window.EventSource = class extends window.EventSource {
        constructor(...args: ConstructorParameters<typeof EventSource>) {
          super(...args);
          this.addEventListener("settle", () => void heard.settlesHeard++);
        }
      };
    });
    // The app registers a stream before it answers it, so once the answer has come a settle reaches the page.
    const eventsOpen = page.waitForResponse(`${app.url}/api/events`);
    await page.goto(app.url);
    await page.fill("#name", "erin");
    await page.click("#sign-in button");
    await eventsOpen;
    await expect.poll(() => postId, { timeout: 10_000 }).not.toBe("");
    await deliverSettle(postId, "waveform");
    // The page has heard it before the feed is answered.
    await page.waitForFunction(() => (window as unknown as { settlesHeard: number }).settlesHeard > 0);
    release();
    await page.waitForFunction(
      (id) => document.querySelector(`article[data-post="${id}"] .stage[data-stage="waveform"]`)?.getAttribute("data-status") === "ready",
      postId,
      { timeout: 10_000 },
    );
  });

  /** Posts the file picked through the page's file input, and answers the new post's id. */
  const pickAndPost = async (page: Page, file: string) => {
    await page.locator("#file").setInputFiles(file);
    const created = page.waitForResponse((r) => r.url() === `${app.url}/api/posts` && r.request().method() === "POST");
    await page.click("#post");
    await page.waitForFunction(() => /^(Posted\.|Not posted)/.test(document.getElementById("status")!.textContent ?? ""));
    expect(await page.locator("#status").textContent()).toBe("Posted.");
    return ((await (await created).json()) as { postId: string }).postId;
  };

  it("an audio-only .webm picked through the file input, which Chromium types video/webm, is posted as audio/webm", async () => {
    const file = path.join(dir, "voice-note.webm");
    await writeFile(file, await makeClip("audio/webm", { lead: 0.2, tone: 1, tail: 0.2 }));
    const postId = await pickAndPost(carol, file);
    await carol.waitForSelector(`article[data-post="${postId}"]`);
  });

  it("a play or seek on a URL with under a minute left reads the post for a fresh one first, so playback goes on at once", async () => {
    // Long enough that a seek near the end asks for bytes the element has not buffered (it preloads a few seconds).
    const file = path.join(dir, "long-note.wav");
    await writeFile(file, await makeClip("audio/wav", { lead: 0.2, tone: 12, tail: 0.2 }));
    const postId = await pickAndPost(carol, file);
    const card = carol.locator(`article[data-post="${postId}"]`);
    await carol.waitForFunction(
      ([id, stages]) => {
        const chips = [...document.querySelectorAll(`article[data-post="${id}"] .stage`)] as HTMLElement[];
        const audio = document.querySelector(`article[data-post="${id}"] audio`) as HTMLAudioElement;
        return chips.length === stages.length && chips.every((chip) => chip.dataset.status === "ready" && chip.hasAttribute("data-live")) && audio.readyState >= 1;
      },
      [postId, stageNames] as const,
      { timeout: 60_000 },
    );
    const audioOf = (id: string) => {
      const audio = document.querySelector(`article[data-post="${id}"] audio`) as HTMLAudioElement;
      return { src: audio.src, currentTime: audio.currentTime, duration: audio.duration };
    };
    const before = await carol.evaluate(audioOf, postId);
    // The page's clock and the service's, an hour and a half on: the URL the page holds has expired. It answers 403,
    // which Chromium blocks for a cross-origin <audio> (ORB), and the element retries for about 30 s before `error`.
    serviceClockMs += 90 * 60_000;
    await carol.clock.setSystemTime(Date.now() + serviceClockMs);
    const wave = (await card.locator(".waveform").boundingBox())!;
    await carol.mouse.click(wave.x + wave.width * 0.85, wave.y + wave.height / 2);
    await card.locator("button.play").click();
    await carol.waitForFunction(
      ([id, at]) => (document.querySelector(`article[data-post="${id}"] audio`) as HTMLAudioElement).currentTime > at,
      [postId, 0.85 * before.duration + 0.3] as const,
      { timeout: 5_000 },
    );
    expect((await carol.evaluate(audioOf, postId)).src).not.toBe(before.src);
    await card.locator("button.play").click();
    await carol.screenshot({ path: path.join(screenshots, "6-carol-fresh-url.png"), fullPage: true });
  }, 90_000);

  it("stage chips whose settles were sent while the event stream was down catch up when it reconnects, without a reload", async () => {
    // Frank's page reaches the app through a proxy whose connections can be cut.
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(app.url).port) });
    const viaProxy = `http://127.0.0.1:${proxy.port}`;
    try {
      const page = await (await browser.newContext()).newPage();
      const eventsOpen = page.waitForResponse(`${viaProxy}/api/events`);
      // The feed shows alice's prompt still processing, as a page that read it before its stages settled. It is drawn
      // once the stream is open, so that only a later opening can bring the page up to date.
      let postId = "";
      await page.route(`${viaProxy}/api/feed`, async (route) => {
        const response = await route.fetch();
        const feed = (await response.json()) as { threads: { post: { uri: string; authorId: string; processing: Record<string, { status: string }> } }[] };
        const { post } = feed.threads.find((t) => t.post.authorId === "alice")!;
        postId = post.uri.split("/").pop()!;
        for (const state of Object.values(post.processing)) state.status = "pending";
        await eventsOpen;
        await route.fulfill({ response, json: feed });
      });
      await page.goto(viaProxy);
      await page.fill("#name", "frank");
      await page.click("#sign-in button");
      await page.waitForSelector('article[data-author="alice"] .stage[data-status="pending"]');
      // The stream is cut and a settle goes out meanwhile: the app has no stream to push it on. EventSource
      // reconnects on its own, that reconnection is answered with a proxy's error page, and EventSource gives up.
      await proxy.refuse();
      await deliverSettle(postId, "waveform");
      await page.route(`${viaProxy}/api/events`, (route) => route.fulfill({ status: 502, contentType: "text/html", body: "<html><body>Bad Gateway</body></html>" }), { times: 1 });
      await proxy.heal();
      await page.waitForFunction(
        (id) => {
          const chips = [...document.querySelectorAll(`article[data-post="${id}"] .stage`)] as HTMLElement[];
          return chips.length > 0 && chips.every((chip) => chip.dataset.status === "ready");
        },
        postId,
        { timeout: 15_000 },
      );
      await page.screenshot({ path: path.join(screenshots, "7-frank-reconnected.png"), fullPage: true });
      await page.context().close();
    } finally {
      await proxy.close();
    }
  }, 30_000);

  it("the browser never holds the service token: it calls the service only to play signed playback URLs", async () => {
    expect(serviceCalls.length).toBeGreaterThan(0);
    for (const call of serviceCalls) expect(call).toEqual({ url: expect.stringMatching(new RegExp(`^${playback.url}/api/v1/audio\\?`)), authorization: undefined });
    for (const page of [alice, bob, carol]) expect(await page.content()).not.toContain(svc.tenants.alpha.token);
  });
});
