/**
 * Composition of enrichment for a runtime: the dispatcher the configuration selects (inline, SQS, Cloud Tasks or
 * off), the pass's ports, and the enrichment port the write routes use.
 */
import type { BlobStore } from "../blobs/blob-store";
import type { Config } from "../config/types";
import { createCloudTasksDispatcher } from "../dispatch/cloud-tasks-dispatcher";
import { createSqsClient } from "../dispatch/sqs-client";
import { createSqsDispatcher } from "../dispatch/sqs-dispatcher";
import type { Logger } from "../observability/logger";
import { dispatchMode, offDispatcher, type Dispatcher } from "../processing/dispatcher";
import { backgroundWork, createEnrichment, type Enrichment } from "../processing/enrichment";
import { createInlineDispatcher } from "../processing/inline-dispatcher";
import type { PassDeps } from "../processing/run-pass";
import type { ProviderEntry } from "../providers/provider-registry";
import type { Sql } from "../sql/port";
import type { DeliveryOptions } from "../webhooks/deliver-webhook";
import type { SQSClient } from "@aws-sdk/client-sqs";

export interface EnrichmentOverrides {
  registry?: readonly ProviderEntry[];
  delivery?: Partial<DeliveryOptions>;
  sqs?: SQSClient;
  inlineRetryDelaysMs?: number[];
}

export const buildEnrichment = (
  ports: { config: Config; sql: Sql; blobs: BlobStore; logger: Logger; now: () => Date },
  overrides: EnrichmentOverrides = {},
): Enrichment & { sqs?: SQSClient } => {
  const { config, sql, blobs, logger, now } = ports;
  const pass: PassDeps = { sql, blobs, config, log: logger, now, registry: overrides.registry, delivery: overrides.delivery };
  const background = backgroundWork();
  const mode = dispatchMode(config);
  let sqs: SQSClient | undefined;
  let dispatcher: Dispatcher = offDispatcher;
  if (mode === "inline") dispatcher = createInlineDispatcher(pass, background.track, overrides.inlineRetryDelaysMs);
  else if (mode === "sqs") {
    sqs = overrides.sqs ?? createSqsClient();
    dispatcher = createSqsDispatcher(sqs, config.processing.queueUrl!);
  } else if (mode === "tasks") dispatcher = createCloudTasksDispatcher(config.processing.tasks!, config.systemAuthToken);
  logger.info("processing dispatch", { mode });
  const enrichment = createEnrichment({ config, sql, dispatcher, pass, delivery: overrides.delivery, background });
  return sqs ? { ...enrichment, sqs } : enrichment;
};
