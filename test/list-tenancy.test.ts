import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost, replyTo } from "./support/post-bodies";
import { serviceMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/**
 * Lists are tenant-isolated: an actor id means a different person in each tenant (the caller owns identity), so the
 * same id asserted under another tenant's token never reaches that tenant's posts, nor the threads rooted in them.
 */
describe.each(serviceMatrix)("lists are tenant-isolated over $name", ({ driver, sql }) => {
  let svc: TestService;
  let alphaPrompt: { uri: string };
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
    const beta = svc.tenants.beta.token;
    // Beta's "same" has a prompt with a reply under it: a post of its own and a thread it roots, both in beta.
    const betaPrompt = await createPost(svc, "same", { text: "beta prompt" }, beta);
    await createPost(svc, "beta-replier", replyTo(betaPrompt), beta);
    alphaPrompt = await createPost(svc, "same", { text: "alpha prompt" });
  });
  afterAll(() => svc?.close());

  const uris = (res: { json: { data: { items: { uri: string }[] } } }) => res.json.data.items.map((p) => p.uri);

  it("GET /api/v1/posts as an actor lists only that actor's posts of the caller's tenant, not another tenant's under the same actor id", async () => {
    const res = await svc.get("/api/v1/posts", { actor: "same" });
    expect(res.status).toBe(200);
    expect(uris(res)).toEqual([alphaPrompt.uri]);
    expect(res.json.data.nextCursor).toBeNull();
  });

  it("GET /api/v1/posts?rootAuthor= finds no reply of another tenant's thread rooted by the same actor id, with or without an acting actor", async () => {
    for (const actor of [undefined, "same"]) {
      const res = await svc.get("/api/v1/posts?rootAuthor=same", { actor });
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual({ items: [], nextCursor: null });
    }
  });
});
