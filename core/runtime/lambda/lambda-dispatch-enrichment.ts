import type { PortLoader } from "./port-loader";

/**
 * The Lambda enrichment port of routes that plan stages and dispatch (create, PATCH): planning over the provider
 * catalog and SQS dispatch, without the worker's providers (lambda-enrichment.ts), so their bundles stay small.
 */
export const lambdaDispatchEnrichment: PortLoader<"enrichment"> = async (config, { sql, blobs, logger, now }) => {
  if (!sql || !blobs) throw new Error('the enrichment port is built over sql and blobs: list them before "enrichment" in uses');
  const { composeEnrichment } = await import("../enrichment/compose-enrichment");
  return composeEnrichment({ config, sql, blobs, logger, now });
};
