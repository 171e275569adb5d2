import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookHeaders } from "../../../core/webhooks/sign-webhook";
import { startTenantApp } from "../tenant-app";

const secret = "tenant-app-webhook-secret-000000000000000";

/** Webhooks in, server-sent events out, as the BFF relays them (no service needed: nothing here calls it). */
describe("the tenant app's live stage status", () => {
  let app: Awaited<ReturnType<typeof startTenantApp>>;
  beforeAll(async () => {
    app = await startTenantApp({ service: { baseUrl: "http://127.0.0.1:9", token: "unused-token-0000000000000000000000" }, webhookSecret: secret, listen: { port: 0 } });
  });
  afterAll(() => app?.close());

  const deliver = (eventId: string, stage: string, key = secret) => {
    const body = JSON.stringify({ postId: "3kabcdefghijk", originAppId: "alpha", stage, status: "ready", occurredAt: new Date().toISOString() });
    return fetch(`${app.url}/webhooks`, { method: "POST", headers: webhookHeaders(key, eventId, Math.floor(Date.now() / 1000), body), body });
  };

  /** The stages of the settle events a page receives, until one for `last` arrives. */
  const pageHears = async (last: string) => {
    const stream = (await fetch(`${app.url}/api/events`, { headers: { cookie: "demo_user=ann" } })).body!.pipeThrough(new TextDecoderStream()).getReader();
    return {
      async until() {
        const stages: string[] = [];
        let text = "";
        while (!stages.includes(last)) {
          const { value, done } = await stream.read();
          if (done) break;
          text += value;
          const events = text.split("\n\n");
          text = events.pop()!;
          for (const event of events) if (event.includes("event: settle")) stages.push(JSON.parse(event.split("data: ")[1]!).stage);
        }
        await stream.cancel();
        return stages;
      },
    };
  };

  it("pushes each verified settle to the open pages once: a repeated event id is acknowledged and dropped", async () => {
    const page = await pageHears("waveform");
    const id = randomUUID();
    expect((await deliver(id, "trim")).status).toBe(200);
    expect((await deliver(id, "trim")).status).toBe(200);
    expect((await deliver(randomUUID(), "waveform")).status).toBe(200);
    expect(await page.until()).toEqual(["trim", "waveform"]);
  });

  it("refuses a webhook whose signature does not verify, and pushes nothing", async () => {
    const page = await pageHears("transcribe");
    expect((await deliver(randomUUID(), "denoise", "another-secret-of-enough-length-000000")).status).toBe(400);
    expect((await deliver(randomUUID(), "transcribe")).status).toBe(200);
    expect(await page.until()).toEqual(["transcribe"]);
  });

  it("answers 401 to a page that has not signed in, without calling the service: the feed and the live stream alike", async () => {
    for (const path of ["/api/feed", "/api/events"]) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe("SIGN_IN");
    }
  });

  it("a post id that does not decode is a 404, and a cookie that does not decode is a signed-out page: the app keeps answering", async () => {
    const path = await fetch(`${app.url}/api/posts/%E0`, { signal: AbortSignal.timeout(5_000) });
    expect(path.status).toBe(404);
    expect((await path.json()).error.code).toBe("NOT_FOUND");
    const cookie = await fetch(`${app.url}/api/feed`, { headers: { cookie: "demo_user=%E0" }, signal: AbortSignal.timeout(5_000) });
    expect(cookie.status).toBe(401);
    expect((await fetch(`${app.url}/api/feed`)).status).toBe(401);
  });
});
