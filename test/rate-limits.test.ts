import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost } from "./support/post-bodies";
import { serviceMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

describe.each(serviceMatrix)("rate limits over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  const write = (actor: string, ip?: string) => svc.post("/api/v1/posts", { actor, ip, json: { text: "limited" } });

  it("writes are limited to 10 per 15 minutes per actor, then 429 RATE_LIMITED with Retry-After, RateLimit-Policy and RateLimit", async () => {
    for (let i = 0; i < 10; i++) expect((await write("w-1")).status).toBe(201);
    const limited = await write("w-1");
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe("RATE_LIMITED");
    const retryAfter = Number(limited.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect(limited.headers["ratelimit-policy"]).toContain("q=10");
    expect(limited.headers.ratelimit).toMatch(/r=0/);
    expect((await svc.get("/api/v1/posts", { actor: "w-1" })).json.data.items).toHaveLength(10);
  });

  it("successful responses carry RateLimit", async () => {
    const res = await write("w-2");
    expect(res.status).toBe(201);
    expect(res.headers.ratelimit).toMatch(/r=9/);
    expect(res.headers["ratelimit-policy"]).toBeDefined();
  });

  it("users behind one shared address do not share actor limits", async () => {
    const ip = "198.51.100.7";
    for (let i = 0; i < 10; i++) await write("w-3a", ip);
    expect((await write("w-3a", ip)).status).toBe(429);
    expect((await write("w-3b", ip)).status).toBe(201);
  });

  it("the aggregate IP limiter runs alongside the actor limits: 120 writes per 15 minutes per IP", async () => {
    const ip = "198.51.100.8";
    for (let i = 0; i < 120; i++) expect((await write(`w-4-${Math.floor(i / 10)}`, ip)).status).toBe(201);
    const limited = await write("w-4-fresh", ip);
    expect(limited.status).toBe(429);
    expect((await write("w-4-fresh", "198.51.100.9")).status).toBe(201);
  });

  it("reads are limited to 60 per minute per actor", async () => {
    const post = await createPost(svc, "r-1");
    const id = post.uri.split("/").pop();
    // createPost read the post once already.
    for (let i = 0; i < 59; i++) expect((await svc.get(`/api/v1/posts/${id}`, { actor: "r-1" })).status).toBe(200);
    expect((await svc.get(`/api/v1/posts/${id}`, { actor: "r-1" })).status).toBe(429);
    expect((await svc.get(`/api/v1/posts/${id}`, { actor: "r-1-other" })).status).toBe(200);
  });

  it("a read of a post that does not exist counts too, and once refused it is 429 rather than 404", async () => {
    const missing = "/api/v1/posts/3zzzzzzzzzzzz";
    for (let i = 0; i < 60; i++) expect((await svc.get(missing, { actor: "r-3" })).status).toBe(404);
    const refused = await svc.get(missing, { actor: "r-3" });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe("RATE_LIMITED");
    expect(refused.headers["retry-after"]).toBeDefined();
  });

  it("a read refused before its query still counts: anonymous plays without a url are 400 until the limit, then 429", async () => {
    const ip = "198.51.100.20";
    for (let i = 0; i < 60; i++) expect((await svc.get("/api/v1/audio", { token: null, ip })).status).toBe(400);
    const refused = await svc.get("/api/v1/audio", { token: null, ip });
    expect(refused.status).toBe(429);
    expect(refused.headers.ratelimit).toMatch(/r=0/);
  });

  it("viewer-less reads are limited per tenant, and other tenants are unaffected", async () => {
    const post = await createPost(svc, "r-2", { text: "beta" }, svc.tenants.beta.token);
    const id = post.uri.split("/").pop();
    for (let i = 0; i < 60; i++) expect((await svc.get(`/api/v1/posts/${id}`, { token: svc.tenants.beta.token })).status).toBe(200);
    expect((await svc.get(`/api/v1/posts/${id}`, { token: svc.tenants.beta.token })).status).toBe(429);
    expect((await svc.get("/api/v1/posts?rootAuthor=x")).status).toBe(200);
  });

  it("each RateLimit-Policy is named for what it keys on: actor, tenant or ip, beside the aggregate-ip limit", async () => {
    const policies = (res: { headers: Record<string, string> }) =>
      [...(res.headers["ratelimit-policy"] ?? "").matchAll(/"([^"]+)";q=(\d+)/g)].map(([, name, q]) => `${name}=${q}`);
    expect(policies(await svc.get("/api/v1/posts", { actor: "named-1" }))).toEqual(["actor=60", "aggregate-ip=600"]);
    expect(policies(await svc.get("/api/v1/posts?rootAuthor=named-1"))).toEqual(["tenant=60", "aggregate-ip=600"]);
    expect(policies(await svc.get("/api/v1/audio", { token: null }))).toEqual(["ip=60", "aggregate-ip=600"]);
    expect(policies(await write("named-2"))).toEqual(["actor=10", "aggregate-ip=120"]);
  });

  it("public routes (health, description) are not limited", async () => {
    for (let i = 0; i < 70; i++) expect((await svc.get("/health", { token: null, ip: "198.51.100.10" })).status).toBe(200);
  });
});
