import type { PortLoader } from "./port-loader";

/** The Lambda enrichment port: dispatch as configured (SQS on AWS), over the SQL and blob ports built before it. */
export const lambdaEnrichment: PortLoader<"enrichment"> = async (config, { sql, blobs, logger, now }) => {
  if (!sql || !blobs) throw new Error('the enrichment port is built over sql and blobs: list them before "enrichment" in uses');
  const { buildEnrichment } = await import("../build-enrichment");
  return buildEnrichment({ config, sql, blobs, logger, now });
};
