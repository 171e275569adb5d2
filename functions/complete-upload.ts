import { completeUpload } from "../core/audio/presigned-upload";
import { implement } from "../core/http/route-call";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

const impl = implement(routes.completeUpload, async (call) => {
  const { blob } = await completeUpload({
    store: call.deps.blobs,
    sql: call.sql,
    appId: call.tenant.appId,
    actor: call.actor,
    uploadId: call.params.uploadId,
    now: call.deps.now(),
  });
  return { data: { blob } };
});

export default impl;
export const handler = lambda(impl);
