import { healthSchema } from "../core/health/health-schema";
import { healthProbeMs, probeWithin } from "../core/health/probe-within";
import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

export const route = defineRoute({
  file: "health",
  method: "GET",
  path: "/health",
  summary: "Process and store health; judge readiness by backend, records and blobs",
  auth: "public",
  rateLimit: null,
  uses: ["sql", "blobs"],
  status: 200,
  response: healthSchema,
});

/** Never a 500, and never slow: a store that cannot be reached, or does not answer within 1.5 s, reports `unavailable`. */
const impl = implement(route, async (call) => {
  const { config, blobs } = call.deps;
  const [records, blobState] = await Promise.all([
    probeWithin(
      call.sql
        .query<{ present: boolean }>("SELECT EXISTS (SELECT 1 FROM posts) AS present")
        .then(([row]): "present" | "empty" => (row?.present ? "present" : "empty")),
      healthProbeMs,
      (reason) => call.log.warn("health: records store unavailable", reason),
    ),
    probeWithin(blobs.probe(), healthProbeMs, (reason) => call.log.warn("health: blob store unavailable", reason)),
  ]);
  return {
    data: { ok: true as const, sha: config.sha, deployedAt: config.deployedAt, backend: config.database.kind, records, blobs: blobState },
  };
});

export default impl;
export const handler = lambda(impl, { sql: rdsDataSql, blobs: s3Blobs });
