/**
 * The Node host's background enrichment work: consumers of the processing queue (PROCESSING_CONCURRENCY jobs at
 * once) and of its dead-letter queue (PROCESSING_DEAD_LETTER_QUEUE_URL, else the one the queue's redrive policy
 * names), and the sweep on a timer (SVC_SWEEP_INTERVAL_MS).
 */
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { Deps } from "../../deps";
import { createSqsClient } from "../../dispatch/sqs-client";
import { deadLetterQueueOf } from "../../dispatch/dead-letter-queue";
import { startSqsConsumer } from "../../dispatch/sqs-consumer";
import { runStageMessage } from "../jobs/stage-handler";
import type { Retry } from "../../processing/run-pass";
import { runDeadLetterMessage, runSweep, sentAtOf } from "../jobs/settle-jobs";

export const startEnrichmentWorkers = (
  deps: Deps,
  options: { sqs?: SQSClient; waitSeconds?: number; retryVisibility?: (receiveCount: number, retry: Retry) => number; holdSeconds?: number } = {},
) => {
  const { dispatcher } = deps.enrichment;
  const { queueUrl, deadLetterQueueUrl } = deps.config.processing;
  const stops: (() => Promise<void>)[] = [];
  let finding: Promise<void> = Promise.resolve();
  let stopped = false;
  if (queueUrl || deadLetterQueueUrl) {
    const client = options.sqs ?? createSqsClient(deps.config.aws.region);
    const common = { client, log: deps.logger, waitSeconds: options.waitSeconds, retryVisibility: options.retryVisibility, holdSeconds: options.holdSeconds };
    // PROCESSING_CONCURRENCY consumers, each a job at a time: a pass mostly waits on its providers.
    for (let i = 0; queueUrl && i < deps.config.processing.concurrency; i++) {
      stops.push(startSqsConsumer({ ...common, queueUrl, handle: (m, receiveCount) => runStageMessage(deps, m.Body ?? "", receiveCount) }).stop);
    }
    const consumeDeadLetters = (url: string) =>
      stops.push(
        startSqsConsumer({
          ...common,
          queueUrl: url,
          handle: async (m) => {
            await runDeadLetterMessage(deps, m.Body ?? "", sentAtOf(m.Attributes?.SentTimestamp));
            return "done";
          },
        }).stop,
      );
    if (deadLetterQueueUrl) consumeDeadLetters(deadLetterQueueUrl);
    else if (queueUrl) {
      // Not named: the one the processing queue's redrive policy names.
      finding = deadLetterQueueOf(client, queueUrl).then(
        (url) => {
          if (stopped) return;
          if (url) consumeDeadLetters(url);
          else deps.logger.warn("the processing queue has no dead-letter queue: a job it gives up on waits for the sweep to time it out");
        },
        (error: unknown) => deps.logger.error("could not read the processing queue's redrive policy; set PROCESSING_DEAD_LETTER_QUEUE_URL", { error: String(error) }),
      );
    }
  }
  let sweeping: Promise<unknown> = Promise.resolve();
  // Nothing kills a sweep here but the host's own end: once it is stopping, a running sweep marks nothing more and
  // takes back the marks it has not sent, as a Lambda's does near its timeout.
  const timer = setInterval(() => {
    sweeping = runSweep(deps, dispatcher, () => (stopped ? 0 : Infinity)).catch(() => {}); // logged by the invocation
  }, deps.config.processing.sweepIntervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      await finding;
      clearInterval(timer);
      await Promise.all(stops.map((stop) => stop()));
      await sweeping;
      await deps.enrichment.drain();
    },
  };
};
