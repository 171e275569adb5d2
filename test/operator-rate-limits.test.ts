import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost } from "./support/post-bodies";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/** Limits an operator set in the variable table (SVC_LIMIT_*), some below the interface's defaults and one above. */
const limits = {
  SVC_LIMIT_READS_PER_ACTOR: "2/1m",
  SVC_LIMIT_READS_PER_TENANT: "65/1m",
  SVC_LIMIT_WRITES_PER_ACTOR: "3/2m",
  SVC_LIMIT_WRITES_PER_IP: "4/5m",
  SVC_LIMIT_PLAYBACK_PER_IP: "2/30s",
};

describe.each(edgeMatrix)("rate limits the operator set, over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql, env: limits });
  });
  afterAll(() => svc?.close());

  const write = (actor: string, ip?: string) => svc.post("/api/v1/posts", { actor, ip, json: { text: "limited" } });

  it("a lowered limit is enforced: reads per actor set to 2 per minute make the third read a 429", async () => {
    for (let i = 0; i < 2; i++) expect((await svc.get("/api/v1/posts", { actor: "op-r-1" })).status).toBe(200);
    expect((await svc.get("/api/v1/posts", { actor: "op-r-1" })).status).toBe(429);
    expect((await svc.get("/api/v1/posts", { actor: "op-r-1-other" })).status).toBe(200);
  });

  it("a raised limit is enforced: viewer-less reads per tenant set to 65 per minute let 65 through, past the default 60, and refuse the 66th", async () => {
    const post = await createPost(svc, "op-r-2", { text: "feed" }, svc.tenants.beta.token);
    const path = `/api/v1/posts/${post.uri.split("/").pop()}`;
    for (let i = 0; i < 65; i++) expect((await svc.get(path, { token: svc.tenants.beta.token })).status).toBe(200);
    expect((await svc.get(path, { token: svc.tenants.beta.token })).status).toBe(429);
  });

  it("RateLimit-Policy shows the limits the operator set, and the interface's where none is set", async () => {
    const policy = (res: { headers: Record<string, string> }) => res.headers["ratelimit-policy"];
    expect(policy(await write("op-h-1"))).toBe('"actor";q=3;w=120, "aggregate-ip";q=4;w=300');
    expect(policy(await svc.get("/api/v1/posts", { actor: "op-h-2" }))).toBe('"actor";q=2;w=60, "aggregate-ip";q=600;w=60');
    expect(policy(await svc.get("/api/v1/audio", { token: null }))).toBe('"ip";q=2;w=30, "aggregate-ip";q=600;w=60');
  });

  describe("every route is limited: a request refused before its limits were taken still counts, and past the limit the 429 wins", () => {
    it("writes refused for their body count against the actor's writes", async () => {
      const ip = "198.51.100.50";
      for (let left = 2; left >= 0; left--) {
        const bad = await svc.post("/api/v1/posts", { actor: "op-bad-1", ip, json: { text: 5 } });
        expect(bad.status).toBe(400);
        expect(bad.headers.ratelimit).toBe(`"actor";r=${left};t=120`);
      }
      const next = await write("op-bad-1", ip);
      expect(next.status).toBe(429);
      expect(next.json.error.message).toContain("per acting actor");
    });

    it("anonymous playback refused for its query counts against the client IP's playback", async () => {
      const ip = "198.51.100.51";
      for (let i = 0; i < 2; i++) expect((await svc.get("/api/v1/audio?url=blobs/x&exp=1&sig=x&bogus=1", { token: null, ip })).status).toBe(400);
      expect((await svc.get("/api/v1/audio?url=blobs/x&exp=1&sig=x&bogus=1", { token: null, ip })).status).toBe(429);
    });

    it("writes refused for a bad service token count against the client IP's aggregate writes", async () => {
      const ip = "198.51.100.52";
      const wrong = "not-a-token-of-any-tenant-000000000000000";
      for (let i = 0; i < 4; i++) expect((await svc.post("/api/v1/posts", { actor: "op-bad-3", ip, token: wrong, json: { text: "x" } })).status).toBe(401);
      const fifth = await svc.post("/api/v1/posts", { actor: "op-bad-3", ip, token: wrong, json: { text: "x" } });
      expect(fifth.status).toBe(429);
      expect(fifth.headers["ratelimit-policy"]).toBe('"aggregate-ip";q=4;w=300');
    });
  });

  it("a 429's message names the limit hit by class, key and window, as RateLimit-Policy names it", async () => {
    for (let i = 0; i < 3; i++) expect((await write("op-m-1")).status).toBe(201);
    const byActor = await write("op-m-1");
    expect(byActor.status).toBe(429);
    expect(byActor.headers["ratelimit-policy"]).toContain('"actor";q=3;w=120');
    expect(byActor.json.error.message).toMatch(/^rate limit exceeded: 3 writes per 120 s per acting actor \(RateLimit-Policy "actor"\); retry after \d+ s$/);

    const ip = "198.51.100.40";
    for (let i = 0; i < 4; i++) expect((await write(`op-m-2-${i}`, ip)).status).toBe(201);
    const byIp = await write("op-m-2-fresh", ip);
    expect(byIp.status).toBe(429);
    expect(byIp.json.error.message).toMatch(
      /^rate limit exceeded: 4 writes per 300 s per client IP, every caller together \(RateLimit-Policy "aggregate-ip"\); retry after \d+ s$/,
    );
    expect(Number(byIp.json.error.message.match(/retry after (\d+) s/)[1])).toBe(Number(byIp.headers["retry-after"]));

    const player = "198.51.100.41";
    for (let i = 0; i < 2; i++) expect((await svc.get("/api/v1/audio", { token: null, ip: player })).status).toBe(400);
    const playback = await svc.get("/api/v1/audio", { token: null, ip: player });
    expect(playback.status).toBe(429);
    expect(playback.json.error.message).toMatch(/^rate limit exceeded: 2 reads per 30 s per client IP \(RateLimit-Policy "ip"\); retry after \d+ s$/);
  });
});
