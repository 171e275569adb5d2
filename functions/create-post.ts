import { implement } from "../core/http/route-call";
import { createPost } from "../core/posts/create-post";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

const route = routes.createPost;

const impl = implement(route, async (call) => ({
  data: await createPost({
    sql: call.sql,
    appId: call.tenant.appId,
    did: call.tenant.did,
    actor: call.actor,
    actorDid: call.actorDid,
    body: call.body,
    now: call.deps.now(),
    idempotency: call.idempotency,
    enrichment: call.deps.enrichment,
    log: call.log,
  }),
}));

export default impl;
export const handler = lambda(impl);
