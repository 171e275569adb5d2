import { configured } from "../core/config/parse-config";
import { healthSchema } from "../core/health/health-schema";
import { healthProbeMs, probeWithin } from "../core/health/probe-within";
import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { signedStoreProbes } from "../core/runtime/lambda/signed-store-probes";

export const route = defineRoute({
  file: "health",
  method: "GET",
  path: "/health",
  summary: "Health",
  description: "Process and store health, 200 within 2 s to any well-formed request: judge readiness by `backend`, `records` and `blobs`.",
  auth: "public",
  rateLimit: null,
  uses: ["storeProbes"],
  reads: ["identity"],
  status: 200,
  response: healthSchema,
  // Never a 500 (docs/decisions.md): the OpenAPI description lists none for it.
  neverFails: true,
});

/** Never a 500, and never slow: a store that cannot be reached, or does not answer within 1.5 s, reports `unavailable`. */
const impl = implement(route, async (call) => {
  const { config, storeProbes } = call.deps;
  const [records, blobs] = await Promise.all([
    probeWithin(storeProbes.records(), healthProbeMs, (reason) => call.log.warn("health: records store unavailable", reason)),
    probeWithin(storeProbes.blobs(), healthProbeMs, (reason) => call.log.warn("health: blob store unavailable", reason)),
  ]);
  return {
    data: { ok: true as const, sha: config.sha, deployedAt: config.deployedAt, backend: configured(config.database, "DATABASE_URL").kind, records, blobs },
  };
});

export default impl;
// One signed request per store: the bundle carries neither the Data API nor the S3 client.
export const handler = lambda(impl, { storeProbes: signedStoreProbes });
