import { renditionsFor } from "../../providers/rendition/mp3-rendition-builder";
import { composeWorker } from "../enrichment/compose-worker";
import type { PortLoader } from "./port-loader";

/**
 * The Lambda worker port of the functions that run jobs (the stage function, the system route): the pass's ports
 * and every provider of the registry (compose-worker.ts). They send no job, so they carry no dispatch client; routes
 * that plan and dispatch use lambda-enrichment.ts. Imported statically, unlike other loaders' adapters: only these
 * functions name it, and esbuild leaves out more of a statically imported SDK (the Transcribe commands unused).
 */
export const lambdaWorker: PortLoader<"worker"> = async (config, { sql, blobs, logger, now }) => {
  if (!sql || !blobs) throw new Error('the worker port is built over sql and blobs: list them before "worker" in uses');
  return composeWorker({ config, sql, blobs, logger, now, ...renditionsFor(config.rendition) });
};
