/**
 * The enrichment port each runtime builds once: request-time planning over the provider catalog, and the dispatcher
 * the configuration selects (inline, SQS, Cloud Tasks or off). Inline dispatch is the one the host gives, running
 * jobs on its worker (the Node host's); a function given none (create and PATCH on Lambda) refuses it at startup.
 * This module imports no provider adapter and no pass, so those functions' bundles carry neither.
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { Config } from "../../config/types";
import { createCloudTasksDispatcher } from "../../dispatch/cloud-tasks-dispatcher";
import { createSqsClient } from "../../dispatch/sqs-client";
import { createSqsDispatcher } from "../../dispatch/sqs-dispatcher";
import { dispatchMode, offDispatcher, type Dispatcher } from "../../processing/dispatcher";
import { backgroundWork, createEnrichment, type Enrichment } from "../../processing/enrichment";
import type { RetryPolicy } from "../../processing/retry-policy";
import type { EnrichmentPorts, WorkerOverrides } from "./compose-worker";

export interface EnrichmentOverrides extends WorkerOverrides {
  sqs?: SQSClient;
  /** The retry policy of inline dispatch (tests wait less). */
  retry?: RetryPolicy;
}

/** Inline dispatch over the host's worker, its background retries tracked so shutdown and tests can wait for them. */
export type InlineDispatch = (track: (work: Promise<unknown>) => void) => Dispatcher;

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
 * The dispatcher the configuration selects, and the port over it. Without a worker to run jobs inline, a
 * configuration that selects inline dispatch is refused at startup rather than silently not processing.
 */
export const composeEnrichment = (
  ports: Pick<EnrichmentPorts, "config" | "sql" | "logger">,
  overrides: EnrichmentOverrides = {},
  inline?: InlineDispatch,
  /** The host's background work, shared with its worker's deliveries so `drain` waits for those too. */
  background = backgroundWork(),
): Enrichment => {
  const { config, sql, logger } = ports;
  const dispatcher =
    dispatchMode(config) === "inline" && inline ? inline(background.track) : durableDispatcher(config, overrides.sqs).dispatcher;
  logger.info("processing dispatch", { mode: dispatcher.mode });
  return createEnrichment({ config, sql, dispatcher, providers: overrides.providers, delivery: overrides.delivery, background });
};
