import { playAudio } from "../core/audio/play-audio";
import { implement } from "../core/http/route-call";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

/** Anonymous playback by capability: only a signed, unexpired `blobs/` address resolves. */
const impl = implement(routes.getAudio, async (call) => ({
  raw: await playAudio({
    store: call.deps.blobs,
    sql: call.sql,
    secret: call.deps.config.playbackSigningKey,
    query: call.req.query,
    method: call.req.method,
    range: call.req.headers.range,
    now: call.deps.now(),
    renditions: call.deps.renditions,
  }),
}));

export default impl;
export const handler = lambda(impl);
