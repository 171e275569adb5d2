import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Chromium, launchChromium } from "./support/chromium";
import { backends } from "./support/databases";
import { startTestService, type TestService } from "./support/test-service";

/**
 * /api/reference as a newcomer meets it: opened at 127.0.0.1 while the deployment's configured name is another
 * (localhost, as the description's server says), its "Test Request" must still reach the server that served the
 * page. A request to another name would be cross-origin, and the API sends no CORS headers, so the browser would
 * refuse it.
 */
describe("the reference page in a browser", () => {
  let svc: TestService;
  let browser: Chromium;
  let pageUrl: string;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      sql: backends[0]!.open,
      configure: (env, baseUrl) => (env.SVC_PUBLIC_BASE_URL = baseUrl.replace("127.0.0.1", "localhost")),
    });
    pageUrl = `${svc.baseUrl}/api/reference`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  it("sends Test Request to the origin the page was opened at, whichever name the description's server has", async () => {
    expect(new URL(pageUrl).hostname).toBe("127.0.0.1");
    const description = (await (await fetch(`${svc.baseUrl}/openapi.json`)).json()) as { servers: { url: string }[] };
    expect(new URL(description.servers[0]!.url).hostname).toBe("localhost");

    const page = await browser.context.newPage();
    const failures: string[] = [];
    page.on("requestfailed", (request) => failures.push(`${request.url()}: ${request.failure()?.errorText}`));
    page.on("console", (message) => message.type() === "error" && failures.push(message.text()));
    await page.goto(pageUrl);
    await page.locator("button", { hasText: "Test Request" }).filter({ hasText: "get /health" }).first().click();
    const [answer] = await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === "/health"),
      page.locator("button", { hasText: "Send" }).first().click(),
    ]);
    expect(new URL(answer.url()).origin).toBe(new URL(pageUrl).origin);
    expect(answer.status()).toBe(200);
    expect(answer.request().headers().origin).toBeUndefined(); // same-origin: the browser sent no CORS request
    await expect.poll(() => page.getByText('"backend": "pglite"').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    await page.close();
  });

  it("lists each operation in the sidebar by its short title, without raw Markdown", async () => {
    const page = await browser.context.newPage();
    await page.goto(pageUrl);
    const sidebar = page.getByRole("navigation").first();
    await expect.poll(() => sidebar.getByText("Create a post", { exact: true }).count(), { timeout: 20_000 }).toBeGreaterThan(0);
    const text = await sidebar.innerText();
    for (const title of ["List posts", "Get a post", "Request enrichment", "Upload audio", "Play audio", "Health"]) expect(text).toContain(title);
    expect(text).not.toContain("`");
    await page.close();
  });

  it("behind a proxy that serves the service under a path prefix, the page loads its script relative to itself and renders", async () => {
    // A reverse proxy that serves the service under /svc/ and strips the prefix on the way in, as a gateway stage does.
    const proxy: Server = createServer((req, res) => {
      if (!req.url!.startsWith("/svc/")) return res.writeHead(404).end("outside the prefix");
      const upstream = request(`${svc.baseUrl}${req.url!.slice("/svc".length)}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const page = await browser.context.newPage();
    try {
      const outside: string[] = [];
      page.on("request", (r) => !new URL(r.url()).pathname.startsWith("/svc/") && r.url().startsWith("http") && outside.push(r.url()));
      await page.goto(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/svc/api/reference`);
      expect(outside, "requests that leave the prefix").toEqual([]);
      await expect.poll(() => page.getByText("Create a post", { exact: true }).count(), { timeout: 20_000 }).toBeGreaterThan(0);
      expect(outside).toEqual([]);
    } finally {
      await page.close();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("the page's Scalar options draw no deprecation warning", async () => {
    const page = await browser.context.newPage();
    const warnings: string[] = [];
    page.on("console", (message) => /deprecat/i.test(message.text()) && warnings.push(message.text()));
    await page.goto(pageUrl);
    await expect.poll(() => page.getByText("Create a post", { exact: true }).count(), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(warnings).toEqual([]);
    await page.close();
  });
});
