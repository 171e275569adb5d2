import type { TestService } from "./test-service";

/** Creates a post as `actor` and returns its view (as the author sees it). */
export const createPost = async (svc: TestService, actor: string, body: Record<string, unknown> = { text: "hello" }, token?: string) => {
  const created = await svc.post("/api/v1/posts", { actor, json: body, token });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.body.toString()}`);
  const view = await svc.get(`/api/v1/posts/${created.json.data.postId}`, { actor, token });
  return view.json.data as { uri: string; cid: string; kind: string; authorId: string; record: Record<string, unknown> };
};

export const strongRef = (post: { uri: string; cid: string }) => ({ uri: post.uri, cid: post.cid });

/** A reply body to `parent`, whose thread root is `root` (the parent itself for a prompt). */
export const replyTo = (parent: { uri: string; cid: string }, root = parent, text = "a reply") => ({
  text,
  reply: { root: strongRef(root), parent: strongRef(parent) },
});
