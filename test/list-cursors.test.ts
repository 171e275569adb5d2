import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost, replyTo } from "./support/post-bodies";
import { serviceMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/**
 * A cursor is the id of the last item of a page of one list. One that names no item of the very list it is sent to
 * (another post's replies, the post itself, a deeper reply of its thread, another author's thread, the other kind)
 * is a 400 on every list, rather than a page that silently continues some other list.
 */
describe.each(serviceMatrix)("list cursors over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  const idOf = (post: { uri: string }) => post.uri.split("/").pop()!;
  const expectRefused = async (path: string, actor?: string) => {
    const res = await svc.get(path, { actor });
    expect(res.status, path).toBe(400);
    expect(res.json.error.code).toBe("VALIDATION_ERROR");
    expect(res.json.error.issues).toEqual([{ path: ["query", "cursor"], message: expect.any(String) }]);
  };

  it("a cursor from another list is a 400 on the replies list, the rootAuthor list and the viewer's own list", async () => {
    const prompt = await createPost(svc, "lc-asker");
    const otherPrompt = await createPost(svc, "lc-other-asker");
    const first = await createPost(svc, "lc-responder", replyTo(prompt));
    const deeper = await createPost(svc, "lc-asker", replyTo(first, prompt));
    const elsewhere = await createPost(svc, "lc-responder", replyTo(otherPrompt));

    const replies = `/api/v1/posts/${idOf(prompt)}/replies`;
    expect((await svc.get(`${replies}?cursor=${idOf(first)}`)).status).toBe(200);
    for (const foreign of [elsewhere, prompt, deeper, otherPrompt]) await expectRefused(`${replies}?cursor=${idOf(foreign)}`);

    const threads = "/api/v1/posts?rootAuthor=lc-asker";
    expect((await svc.get(`${threads}&cursor=${idOf(deeper)}`)).status).toBe(200);
    for (const foreign of [elsewhere, prompt, otherPrompt]) await expectRefused(`${threads}&cursor=${idOf(foreign)}`);
    await expectRefused(`${threads}&kind=prompt&cursor=${idOf(first)}`);

    const own = "/api/v1/posts";
    expect((await svc.get(`${own}?cursor=${idOf(first)}`, { actor: "lc-responder" })).status).toBe(200);
    for (const foreign of [deeper, prompt]) await expectRefused(`${own}?cursor=${idOf(foreign)}`, "lc-responder");
    await expectRefused(`${own}?kind=prompt&cursor=${idOf(first)}`, "lc-responder");
  });
});
