import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost, replyTo } from "./support/post-bodies";
import { serviceMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/**
 * Reply gating is per branch: a reply's two participants are the prompt's author and the responder who opened that
 * branch, however deep the branch runs and whoever wrote the post replied to; the opener of one branch is an outsider
 * in another branch of the same thread. Lists report the same verdict per item and viewer as a single read does.
 */
describe.each(serviceMatrix)("reply gating per branch over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  const idOf = (post: { uri: string }) => post.uri.split("/").pop()!;
  const reply = (actor: string, parent: { uri: string; cid: string }, root: { uri: string; cid: string }) =>
    svc.post("/api/v1/posts", { actor, json: replyTo(parent, root) });

  it("the branch's two participants may answer each other and themselves at any depth; the opener of one branch is an outsider in another", async () => {
    const prompt = await createPost(svc, "br-asker");
    const opener = await createPost(svc, "br-responder", replyTo(prompt));
    // The responder answers its own opener, the asker that answer, the asker itself, the responder the asker.
    const selfAnswer = await createPost(svc, "br-responder", replyTo(opener, prompt));
    const askerAnswer = await createPost(svc, "br-asker", replyTo(selfAnswer, prompt));
    const askerAgain = await createPost(svc, "br-asker", replyTo(askerAnswer, prompt));
    const deepest = await createPost(svc, "br-responder", replyTo(askerAgain, prompt));
    expect((await reply("br-asker", deepest, prompt)).status).toBe(201);
    for (const post of [opener, selfAnswer, askerAnswer, askerAgain, deepest]) {
      const outsider = await reply("br-outsider", post, prompt);
      expect(outsider.status).toBe(403);
      expect(outsider.json.error.code).toBe("NOT_A_PARTICIPANT");
    }
    // A second branch of the same thread: its opener and the asker are its participants; the first opener is not.
    const otherOpener = await createPost(svc, "br-outsider", replyTo(prompt));
    const crossing = await reply("br-responder", otherOpener, prompt);
    expect(crossing.status).toBe(403);
    expect(crossing.json.error.code).toBe("NOT_A_PARTICIPANT");
    expect((await reply("br-responder", deepest, prompt)).status).toBe(201);
    expect((await reply("br-asker", otherOpener, prompt)).status).toBe(201);
    expect((await reply("br-outsider", otherOpener, prompt)).status).toBe(201);
  });

  it("list items carry each viewer's own verdict, as a single read does: the asker, each branch's opener, an outsider, and no viewer", async () => {
    const prompt = await createPost(svc, "bl-asker");
    const first = await createPost(svc, "bl-first", replyTo(prompt));
    const second = await createPost(svc, "bl-second", replyTo(prompt));
    const lists = [`/api/v1/posts/${idOf(prompt)}/replies`, "/api/v1/posts?rootAuthor=bl-asker"];
    const allowed = { canReply: true };
    const refused = { canReply: false, replyDisabledReason: "not_a_participant" };
    const expected: Record<string, Record<string, object>> = {
      "bl-asker": { "bl-first": allowed, "bl-second": allowed },
      "bl-first": { "bl-first": allowed, "bl-second": refused },
      "bl-second": { "bl-first": refused, "bl-second": allowed },
      "bl-outsider": { "bl-first": refused, "bl-second": refused },
    };
    for (const path of lists) {
      for (const [viewer, verdicts] of Object.entries(expected)) {
        const items = (await svc.get(path, { actor: viewer })).json.data.items as { uri: string; authorId: string; viewer: object }[];
        expect(items.map((item) => item.uri).sort()).toEqual([first.uri, second.uri].sort());
        for (const item of items) {
          expect(item.viewer).toEqual({ isAuthor: item.authorId === viewer, ...verdicts[item.authorId] });
          const single = await svc.get(`/api/v1/posts/${idOf(item)}`, { actor: viewer });
          expect(single.json.data.viewer).toEqual(item.viewer);
        }
      }
      const anonymous = (await svc.get(path)).json.data.items as object[];
      expect(anonymous).toHaveLength(2);
      for (const item of anonymous) expect(item).not.toHaveProperty("viewer");
    }
  });
});
