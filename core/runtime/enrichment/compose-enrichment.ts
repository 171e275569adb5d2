/**
 * The enrichment port of a function that plans and dispatches but never runs a pass itself (create and PATCH on
 * Lambda): request-time planning over the provider catalog, and a durable dispatcher (SQS, Cloud Tasks) or none.
 * This module imports no provider adapter and no pass, so those functions' bundles carry neither; the full worker
 * (build-enrichment.ts) adds inline dispatch, which runs the pass inside the request.
 */
import type { BlobStore } from "../../blobs/blob-store";
import type { Config } from "../../config/types";
import { createCloudTasksDispatcher } from "../../dispatch/cloud-tasks-dispatcher";
import { createSqsClient } from "../../dispatch/sqs-client";
import { createSqsDispatcher } from "../../dispatch/sqs-dispatcher";
import type { Logger } from "../../observability/logger";
import { dispatchMode, offDispatcher, type Dispatcher } from "../../processing/dispatcher";
import { backgroundWork, createEnrichment, type Enrichment } from "../../processing/enrichment";
import type { PassDeps } from "../../processing/run-pass";
import type { ProviderEntry } from "../../providers/provider-registry";
import type { Sql } from "../../sql/port";
import type { DeliveryOptions } from "../../webhooks/deliver-webhook";
import type { SQSClient } from "@aws-sdk/client-sqs";

export interface EnrichmentOverrides {
  registry?: readonly ProviderEntry[];
  delivery?: Partial<DeliveryOptions>;
  sqs?: SQSClient;
  inlineRetryDelaysMs?: number[];
}

export interface EnrichmentPorts {
  config: Config;
  sql: Sql;
  blobs: BlobStore;
  logger: Logger;
  now: () => Date;
}

/** Runs passes inside the process (the full worker's inline dispatcher). */
export type InlineDispatcherFactory = (pass: PassDeps, track: (work: Promise<unknown>) => void) => Dispatcher;

const inlineRefused =
  "SVC_PROCESSING_INLINE selects inline dispatch, but this function only dispatches (it carries no providers): set PROCESSING_QUEUE_URL or the SVC_TASKS_* variables";

/** The durable dispatcher the configuration selects (SQS, Cloud Tasks) or none; inline dispatch is refused. */
export const durableDispatcher = (config: Config, sqsOverride?: SQSClient): { dispatcher: Dispatcher; sqs?: SQSClient } => {
  const mode = dispatchMode(config);
  if (mode === "inline") throw new Error(inlineRefused);
  if (mode === "sqs") {
    const sqs = sqsOverride ?? createSqsClient(config.aws.region);
    return { dispatcher: createSqsDispatcher(sqs, config.processing.queueUrl!), sqs };
  }
  if (mode === "tasks") return { dispatcher: createCloudTasksDispatcher(config.processing.tasks!, config.systemAuthToken) };
  return { dispatcher: offDispatcher };
};

/**
 * The dispatcher the configuration selects, and the port over it. Without `inline`, a configuration that selects
 * inline dispatch is refused at startup rather than silently not processing.
 */
export const composeEnrichment = (
  ports: EnrichmentPorts,
  overrides: EnrichmentOverrides = {},
  inline?: InlineDispatcherFactory,
): Enrichment & { sqs?: SQSClient } => {
  const { config, sql, blobs, logger, now } = ports;
  const pass: PassDeps = { sql, blobs, config, log: logger, now, registry: overrides.registry, delivery: overrides.delivery };
  const background = backgroundWork();
  const mode = dispatchMode(config);
  const { dispatcher, sqs } = mode === "inline" && inline ? { dispatcher: inline(pass, background.track), sqs: undefined } : durableDispatcher(config, overrides.sqs);
  logger.info("processing dispatch", { mode });
  const enrichment = createEnrichment({ config, sql, dispatcher, pass, delivery: overrides.delivery, background });
  return sqs ? { ...enrichment, sqs } : enrichment;
};
