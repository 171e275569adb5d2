/** The thread facets of a post that decide who may answer it. */
export interface ThreadFacets {
  kind: "prompt" | "reply";
  rootAuthorId: string | null;
  branchAuthorId: string | null;
}

export type ReplyVerdict = { canReply: true } | { canReply: false; reason: "unauthenticated" | "not_a_participant" };

/**
 * Replying to a prompt is open to any authenticated viewer; replying to a reply is restricted to the two
 * participants of that branch: the prompt's author and the responder who opened the branch.
 */
export const replyVerdict = (target: ThreadFacets, actor: string | undefined): ReplyVerdict => {
  if (!actor) return { canReply: false, reason: "unauthenticated" };
  if (target.kind === "prompt") return { canReply: true };
  return actor === target.rootAuthorId || actor === target.branchAuthorId
    ? { canReply: true }
    : { canReply: false, reason: "not_a_participant" };
};
