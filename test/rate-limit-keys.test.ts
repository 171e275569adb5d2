/**
 * What the rate limits key on and cover (docs/decisions.md#rate-limits): the actor key is `<appId>:<actor>`, so one tenant's actor
 * never spends another tenant's budget under the same name; and the replies list is a read like the others.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost } from "./support/post-bodies";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

describe.each(edgeMatrix)("rate-limit keys over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  it("the actor key includes the tenant: actor x spent at alpha still has its whole write budget at beta", async () => {
    const write = (token: string) => svc.post("/api/v1/posts", { actor: "x", token, json: { text: "keyed" } });
    for (let i = 0; i < 10; i++) expect((await write(svc.tenants.alpha.token)).status).toBe(201);
    expect((await write(svc.tenants.alpha.token)).status).toBe(429);
    const atBeta = await write(svc.tenants.beta.token);
    expect(atBeta.status).toBe(201);
    expect(atBeta.headers.ratelimit).toMatch(/"actor";r=9\b/);
  });

  it("an IPv6 client is keyed on its /64: another address of the same /64 gets no fresh playback budget", async () => {
    // A host picks any interface id in its /64 (privacy addresses), so a per-address key is one the caller chooses.
    const play = (ip: string) => svc.get("/api/v1/audio", { token: null, ip });
    for (let i = 0; i < 60; i++) expect((await play(`2001:db8:7:7:${(i + 1).toString(16)}::1`)).status).toBe(400);
    const refused = await play("2001:db8:7:7:ffff:ffff:ffff:fffe");
    expect(refused.status).toBe(429);
    expect(refused.headers.ratelimit).toMatch(/"ip";r=0\b/);
    expect((await play("2001:db8:7:8::1")).status).toBe(400);
  });

  it("an IPv4-mapped IPv6 client is keyed on its IPv4 address in any spelling: it shares that address's budget and no other's", async () => {
    const play = (ip: string) => svc.get("/api/v1/audio", { token: null, ip });
    const spellings = ["::ffff:198.51.100.61", "0:0:0:0:0:ffff:198.51.100.61", "::ffff:c633:643d", "[0::FFFF:C633:643D]:443"];
    for (let i = 0; i < 60; i++) expect((await play(i < 56 ? "198.51.100.61" : spellings[i - 56]!)).status).toBe(400);
    for (const spelling of spellings) expect((await play(spelling)).headers.ratelimit).toMatch(/"ip";r=0\b/);
    // Another IPv4 client in the expanded and hex spellings has a budget of its own.
    expect((await play("0:0:0:0:0:ffff:198.51.100.62")).headers.ratelimit).toMatch(/"ip";r=59\b/);
    expect((await play("::ffff:c633:643f")).headers.ratelimit).toMatch(/"ip";r=59\b/);
  });

  it("the replies list is rate limited: the 61st read in a minute by one actor is 429 RATE_LIMITED", async () => {
    const prompt = await createPost(svc, "replies-author");
    const replies = `/api/v1/posts/${prompt.uri.split("/").pop()}/replies`;
    for (let i = 0; i < 60; i++) expect((await svc.get(replies, { actor: "replies-reader" })).status).toBe(200);
    const refused = await svc.get(replies, { actor: "replies-reader" });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe("RATE_LIMITED");
    expect(refused.headers["retry-after"]).toBeDefined();
  });
});
