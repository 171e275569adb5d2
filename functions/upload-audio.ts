import { uploadAudio } from "../core/audio/upload-audio";
import { implement } from "../core/http/route-call";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

const impl = implement(routes.uploadAudio, async (call) => {
  const { blob } = await uploadAudio({ store: call.deps.blobs, sql: call.sql, appId: call.tenant.appId, request: call.req });
  return { data: { blob } };
});

export default impl;
export const handler = lambda(impl);
