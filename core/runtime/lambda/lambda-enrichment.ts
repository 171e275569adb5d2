import type { PortLoader } from "./port-loader";

/** The Lambda enrichment worker: dispatch as configured and the providers to run passes (the stage function, the system route, the sweep). */
export const lambdaEnrichment: PortLoader<"enrichment"> = async (config, { sql, blobs, logger, now }) => {
  if (!sql || !blobs) throw new Error('the enrichment port is built over sql and blobs: list them before "enrichment" in uses');
  const { buildEnrichment } = await import("../build-enrichment");
  return buildEnrichment({ config, sql, blobs, logger, now });
};
