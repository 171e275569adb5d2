/**
 * The Node host's background enrichment work: consumers of the processing queue (PROCESSING_CONCURRENCY jobs at
 * once) and its dead-letter queue when they are configured, and the sweep on a timer (SVC_SWEEP_INTERVAL_MS).
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { Deps } from "../../deps";
import { createSqsClient } from "../../dispatch/sqs-client";
import { startSqsConsumer } from "../../dispatch/sqs-consumer";
import { runStageMessage } from "../jobs/stage-handler";
import { runDeadLetterMessage, runSweep } from "../jobs/settle-jobs";

export const startEnrichmentWorkers = (
  deps: Deps,
  options: { sqs?: SQSClient; waitSeconds?: number; retryVisibility?: (receiveCount: number) => number; holdSeconds?: number } = {},
) => {
  const { dispatcher } = deps.enrichment;
  const { queueUrl, deadLetterQueueUrl } = deps.config.processing;
  const stops: (() => Promise<void>)[] = [];
  if (queueUrl || deadLetterQueueUrl) {
    const client = options.sqs ?? createSqsClient(deps.config.aws.region);
    const common = { client, log: deps.logger, waitSeconds: options.waitSeconds, retryVisibility: options.retryVisibility, holdSeconds: options.holdSeconds };
    // PROCESSING_CONCURRENCY consumers, each a job at a time: a pass mostly waits on its providers.
    for (let i = 0; queueUrl && i < deps.config.processing.concurrency; i++) {
      stops.push(startSqsConsumer({ ...common, queueUrl, handle: (m, receiveCount) => runStageMessage(deps, m.Body ?? "", receiveCount) }).stop);
    }
    if (deadLetterQueueUrl) {
      stops.push(
        startSqsConsumer({
          ...common,
          queueUrl: deadLetterQueueUrl,
          handle: async (m) => {
            await runDeadLetterMessage(deps, m.Body ?? "");
            return "done";
          },
        }).stop,
      );
    }
  }
  let sweeping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    sweeping = runSweep(deps, dispatcher).catch(() => {}); // logged by the invocation
  }, deps.config.processing.sweepIntervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(stops.map((stop) => stop()));
      await sweeping;
      await deps.enrichment.drain();
    },
  };
};
