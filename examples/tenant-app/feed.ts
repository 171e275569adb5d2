import { SvcError, type PostView, type SvcClient } from "../../client/src/index";

export interface Thread {
  post: PostView;
  /** Every reply in the prompt's thread, oldest first; `record.reply.parent` says which post each answers. */
  replies: PostView[];
}

/** Ten prompts: a load's reads (one a prompt, one an author) then fit three loads in the default 60 reads a minute. */
const feedLength = 10;

/**
 * The feed as `viewer` sees it: the app's prompts newest first, each with its thread. Every view is the service's
 * projection for the viewer, so reply gating (viewer.canReply, replyDisabledReason) is the service's word. Reads:
 * one per prompt, and one per prompt author for the replies in all of that author's threads.
 */
export const feedFor = async (viewer: SvcClient, promptIds: readonly string[]): Promise<Thread[]> => {
  const posts = (await Promise.all(promptIds.slice(0, feedLength).map((id) => viewer.getPost(id).catch(unlessGone)))).filter(
    (post): post is PostView => post !== null,
  );
  const authors = [...new Set(posts.map((post) => post.authorId))];
  const replies: PostView[] = [];
  await Promise.all(
    authors.map(async (author) => {
      for await (const reply of viewer.listPosts({ rootAuthor: author, kind: "reply", limit: 100 })) replies.push(reply);
    }),
  );
  replies.sort((a, b) => a.record.createdAt.localeCompare(b.record.createdAt));
  return posts.map((post) => ({ post, replies: replies.filter((reply) => reply.record.reply?.root.uri === post.uri) }));
};

const unlessGone = (error: unknown): null => {
  if (error instanceof SvcError && error.status === 404) return null;
  throw error;
};
