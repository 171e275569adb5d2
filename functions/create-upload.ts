import { createUpload } from "../core/audio/presigned-upload";
import { implement } from "../core/http/route-call";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

/** Direct-to-S3 uploads, for files the gateway cannot carry; 404 on the file store. */
const impl = implement(routes.createUpload, async (call) => ({
  data: await createUpload({
    store: call.deps.blobs,
    sql: call.sql,
    appId: call.tenant.appId,
    actor: call.actor,
    mimeType: call.body.mimeType,
    size: call.body.size,
    now: call.deps.now(),
  }),
}));

export default impl;
export const handler = lambda(impl);
