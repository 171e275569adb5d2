import { DomainError } from "../core/domain-error";
import { implement } from "../core/http/route-call";
import { findPost } from "../core/posts/post-store";
import { toPostView } from "../core/posts/post-view";
import { projectionOf } from "../core/posts/projection";
import { isTid } from "../core/records/tid";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

const impl = implement(routes.getPost, async (call) => {
  const { postId } = call.params;
  const row = isTid(postId) ? await findPost(call.sql, call.tenant.appId, postId) : null;
  if (!row) throw new DomainError("NOT_FOUND", "post not found");
  return { data: toPostView(row, projectionOf(call)) };
});

export default impl;
export const handler = lambda(impl);
