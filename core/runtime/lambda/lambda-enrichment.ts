import type { PortLoader } from "./port-loader";

/**
 * The Lambda enrichment port of routes that plan stages and dispatch (create, PATCH): planning over the provider
 * catalog and SQS or Cloud Tasks dispatch, without the worker's providers (lambda-worker.ts), so their bundles stay
 * small.
 */
export const lambdaEnrichment: PortLoader<"enrichment"> = async (config, { sql, logger }) => {
  if (!sql) throw new Error('the enrichment port is built over sql: list it before "enrichment" in uses');
  const { composeEnrichment } = await import("../enrichment/compose-enrichment");
  return composeEnrichment({ config, sql, logger });
};
