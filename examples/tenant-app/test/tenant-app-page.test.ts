import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "../../../client/test/support/fault-proxy";
import { backends } from "../../../test/support/databases";
import { makeClip } from "../../../test/support/rendition-fixtures";
import { startTestService, type TestService } from "../../../test/support/test-service";
import { startTenantApp } from "../tenant-app";
import { chromiumPath, launchChromium } from "./chromium";

const webhookSecret = "tenant-app-webhook-secret-000000000000000";
const prompts = 10;

/**
 * The page's own rules, on a feed of ten prompts with transcripts (the stub providers, run inline): what a load costs
 * in service reads, a refused audio load, failures the page must show, and what a screen reader hears.
 */
describe("the reference tenant app's page", () => {
  let dir: string;
  let svc: TestService;
  /** Between the BFF and the service: counts the BFF's reads. */
  let reads: FaultProxy;
  let app: Awaited<ReturnType<typeof startTenantApp>>;
  let browser: Browser;

  const signIn = async (name: string, on = browser): Promise<Page> => {
    const page = await (await on.newContext()).newPage();
    await page.goto(app.url);
    await page.fill("#name", name);
    await page.click("#sign-in button");
    await page.waitForSelector("#app:not([hidden])");
    return page;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tenant-page-"));
    const microphone = path.join(dir, "microphone.wav");
    const clip = await makeClip("audio/wav", { lead: 0.2, tone: 1.5, tail: 0.3 });
    await writeFile(microphone, clip);
    svc = await startTestService({ driver: "node", sql: backends[0]!.open, env: { SVC_PROCESSING_INLINE: "true", SVC_PROCESSING_STUB: "true" } });
    reads = await startFaultProxy(svc.baseUrl);
    app = await startTenantApp({ service: { baseUrl: reads.url, token: svc.tenants.alpha.token }, webhookSecret, listen: { port: 0 } });
    for (let i = 0; i < prompts; i++) {
      const session = await fetch(`${app.url}/api/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: `author${i}` }) });
      const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
      const { blob } = (await (await fetch(`${app.url}/api/audio`, { method: "POST", headers: { cookie, "content-type": "audio/wav" }, body: new Uint8Array(clip) })).json()) as { blob: unknown };
      const posted = await fetch(`${app.url}/api/posts`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify({ text: `prompt ${i}`, audio: blob }) });
      const { postId } = (await posted.json()) as { postId: string };
      // Processing runs inline but after the answer: wait for the transcript the captions are made from.
      for (let segments = 0; segments === 0; await new Promise((resolve) => setTimeout(resolve, 100))) {
        const { post } = (await (await fetch(`${app.url}/api/posts/${postId}`, { headers: { cookie } })).json()) as { post: { embed?: { transcript?: { segments?: unknown[] } } } };
        segments = post.embed?.transcript?.segments?.length ?? 0;
      }
    }
    browser = await launchChromium(microphone);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await reads?.close();
    await svc?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a feed load costs at most twenty service reads, captions included, so three loads fit 60 reads a minute", async () => {
    const before = reads.seen.length;
    const page = await signIn("reader");
    await page.waitForFunction((n) => document.querySelectorAll("article").length === n, prompts);
    // Every card's captions track has loaded its cues.
    await page.waitForFunction(() => [...document.querySelectorAll("article audio")].every((audio) => ((audio as HTMLAudioElement).textTracks[0]?.cues?.length ?? 0) > 0));
    await page.waitForTimeout(500);
    const serviceReads = reads.seen.slice(before).filter((r) => r.method === "GET");
    expect(serviceReads.length).toBeLessThanOrEqual(2 * prompts);
    await page.context().close();
  });

  it("a player whose audio load is refused (the per-IP playback limit's 429) plays once the refusal has passed", async () => {
    const page = await (await browser.newContext()).newPage();
    let refusing = true;
    await page.route(`${svc.baseUrl}/api/v1/audio**`, (route) =>
      refusing ? route.fulfill({ status: 429, contentType: "application/json", body: JSON.stringify({ error: { code: "RATE_LIMITED", message: "rate limit exceeded" } }) }) : route.continue(),
    );
    await page.goto(app.url);
    await page.fill("#name", "listener");
    await page.click("#sign-in button");
    const first = page.locator("article").first();
    await first.locator(".note", { hasText: "Trying again" }).waitFor({ timeout: 40_000 });
    refusing = false;
    await first.locator("button.play").click();
    await page.waitForFunction(() => (document.querySelector("article audio") as HTMLAudioElement).currentTime > 0.2, undefined, { timeout: 20_000 });
    expect(await first.locator(".note").textContent()).toBe("");
    await page.context().close();
  }, 90_000);

  it("a name the BFF refuses (400 BAD_NAME) is reported in the sign-in form's status", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(app.url);
    await page.fill("#name", "<bad!>");
    await page.click("#sign-in button");
    await page.waitForFunction(() => /Not signed in: a name of 1 to 40/.test(document.getElementById("sign-in-status")!.textContent ?? ""));
    expect(await page.locator("#app").isHidden()).toBe(true);
    await page.context().close();
  });

  it("a microphone the browser denies is reported in the status, and the record button stays ready", async () => {
    const denying = await chromium.launch({ executablePath: chromiumPath(), args: ["--headless", "--no-sandbox", "--disable-gpu", "--deny-permission-prompts", "--use-fake-device-for-media-stream"] });
    try {
      const page = await signIn("muted", denying);
      await page.click("#record");
      await page.waitForFunction(() => /^No microphone:/.test(document.getElementById("status")!.textContent ?? ""));
      expect(await page.locator("#record").textContent()).toBe("● Record");
      await page.screenshot({ path: path.join(dir, "denied.png") });
    } finally {
      await denying.close();
    }
  });

  it("the play button's accessible name is Pause while playing and Play again when paused", async () => {
    const page = await signIn("screen-reader");
    const play = page.locator("article").first().locator("button.play");
    // The label follows the audio element's play and pause events, which the browser dispatches as tasks after
    // the click: wait for the state the click asks for, then for the label to say it.
    const labelWhen = (paused: boolean, label: string) =>
      page.waitForFunction(
        ([paused, label]) =>
          (document.querySelector("article audio") as HTMLAudioElement).paused === paused &&
          document.querySelector("article button.play")?.getAttribute("aria-label") === label,
        [paused, label] as const,
        { timeout: 5000 },
      );
    await play.click();
    await labelWhen(false, "Pause");
    await play.click();
    await labelWhen(true, "Play");
    // The recording clock is rewritten every 100 ms: it is no live region (start and stop are said in #status).
    expect(await page.locator("#elapsed").getAttribute("aria-live")).toBeNull();
    await page.context().close();
  });
});
