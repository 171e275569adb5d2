import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/** Read limits lowered so a replay storm is short: 3 a minute per acting actor, 5 a minute per client IP. */
const limits = { SVC_LIMIT_READS_PER_ACTOR: "3/1m", SVC_LIMIT_READS_PER_IP: "5/1m" };

describe.each(edgeMatrix)("idempotent replays are limited as reads, over $name", ({ driver, sql }) => {
  let svc: TestService;
  let offsetMs = 0;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql, env: limits, now: () => new Date(Date.now() + offsetMs) });
  });
  afterAll(() => svc?.close());

  const create = (actor: string, ip: string, key?: string) =>
    svc.post("/api/v1/posts", { actor, ip, json: { text: `by ${actor}` }, headers: key ? { "idempotency-key": key } : {} });

  it("a replay takes the acting actor's read limit: past it a replay is 429, its stored answer untouched and no write taken", async () => {
    const ip = "198.51.100.70";
    const first = await create("rr-1", ip, "rr-key");
    expect(first.status).toBe(201);
    for (let left = 2; left >= 0; left--) {
      const replay = await create("rr-1", ip, "rr-key");
      expect(replay.headers["idempotent-replayed"]).toBe("true");
      expect(replay.headers["ratelimit-policy"]).toBe('"actor";q=3;w=60, "aggregate-ip";q=5;w=60');
      expect(replay.headers.ratelimit).toMatch(new RegExp(`^"actor";r=${left};t=`));
    }
    const refused = await create("rr-1", ip, "rr-key");
    expect(refused.status).toBe(429);
    expect(refused.json.error.message).toContain("reads per 60 s per acting actor");
    expect(refused.headers["retry-after"]).toBeDefined();
    // The same budget as the actor's reads.
    expect((await svc.get("/api/v1/posts", { actor: "rr-1", ip })).status).toBe(429);
    // No write was taken, by the replays or by the refusal: the first create's is the only one so far.
    expect((await create("rr-1", ip)).headers.ratelimit).toMatch(/^"actor";r=8;/);
    offsetMs += 60_000;
    const later = await create("rr-1", ip, "rr-key");
    expect(later.headers["idempotent-replayed"]).toBe("true");
    expect(later.body.toString()).toBe(first.body.toString());
  });

  it("a replay takes the aggregate read limit of its client IP: a replay storm from one address is refused whoever acts", async () => {
    const ip = "198.51.100.71";
    const actors = ["rr-a", "rr-b", "rr-c"];
    for (const actor of actors) expect((await create(actor, ip, "rr-agg")).status).toBe(201);
    const replays = [];
    for (const actor of [...actors, "rr-a", "rr-b"]) replays.push((await create(actor, ip, "rr-agg")).status);
    expect(replays).toEqual([201, 201, 201, 201, 201]);
    const refused = await create("rr-c", ip, "rr-agg");
    expect(refused.status).toBe(429);
    expect(refused.json.error.message).toContain('(RateLimit-Policy "aggregate-ip")');
  });
});
