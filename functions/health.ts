import { probeWithin } from "../core/health/probe-within";
import { implement } from "../core/http/route-call";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

/** Never a 500, and never slow: a store that cannot be reached, or does not answer within 1.5 s, reports `unavailable`. */
const impl = implement(routes.health, async (call) => {
  const { config, blobs } = call.deps;
  const [records, blobState] = await Promise.all([
    probeWithin(
      call.sql
        .query<{ present: boolean }>("SELECT EXISTS (SELECT 1 FROM posts) AS present")
        .then(([row]): "present" | "empty" => (row?.present ? "present" : "empty")),
    ),
    probeWithin(blobs.probe()),
  ]);
  return {
    data: { ok: true as const, sha: config.sha, deployedAt: config.deployedAt, backend: config.database.kind, records, blobs: blobState },
  };
});

export default impl;
export const handler = lambda(impl);
