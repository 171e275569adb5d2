import type { PortLoader } from "./port-loader";

/**
 * The Lambda enrichment port of the functions that run passes (the stage function, the system route): the pass's
 * ports, and no dispatcher (off). Jobs reach them from the queue or Cloud Tasks and they send none, so they carry no
 * dispatch client; the providers come with the pass they import (run-pass.ts). Routes that plan and dispatch use
 * lambda-dispatch-enrichment.ts.
 */
export const lambdaEnrichment: PortLoader<"enrichment"> = async (config, { sql, blobs, logger, now }) => {
  if (!sql || !blobs) throw new Error('the enrichment port is built over sql and blobs: list them before "enrichment" in uses');
  const [{ backgroundWork, createEnrichment }, { offDispatcher }] = await Promise.all([
    import("../../processing/enrichment"),
    import("../../processing/dispatcher"),
  ]);
  const pass = { sql, blobs, config, log: logger, now };
  return createEnrichment({ config, sql, dispatcher: offDispatcher, pass, background: backgroundWork() });
};
