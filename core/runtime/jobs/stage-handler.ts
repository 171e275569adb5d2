/**
 * The processing queue's stage handler, shared by the Lambda stage function (`functions/process-queue.ts`) and the
 * Node host's consumer: a message is a job, which the worker runs (`runJob`) as attempt `receiveCount` of the retry
 * policy's maximum; a job to retry stays on the queue. It takes a batch of 1. The dead-letter and sweep handlers
 * (settle-jobs.ts) run no pass, so their functions bundle no providers.
 */
import { ChangeMessageVisibilityCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSEvent, SQSRecord } from "aws-lambda";
import type { Logger } from "../../observability/logger";
import { parseJob } from "../../processing/job";
import { nextStep, retryDelaySeconds, retryPolicy } from "../../processing/retry-policy";
import type { Retry } from "../../processing/run-pass";
import type { Worker } from "../../processing/worker";

export interface StageHandlerPorts {
  worker: Worker;
  /** The root logger, for a message that is not a job. */
  logger: Logger;
  now: () => Date;
}

/**
 * One stage-queue message: a retry leaves it on the queue, for the policy's wait or the provider's `Retry-After`. A
 * body that is not a job is dropped with an error log.
 */
export const runStageMessage = async (ports: StageHandlerPorts, body: string, receiveCount: number, deadline?: number): Promise<"done" | Retry> => {
  const job = parseJob(body);
  if (!job) {
    ports.logger.error("processing message is not a job; dropped", { body: body.slice(0, 200) });
    return "done";
  }
  const outcome = await ports.worker.runJob(job, { attempt: receiveCount, maxAttempts: retryPolicy.maxAttempts, ...(deadline !== undefined && { deadline }) });
  return nextStep(outcome);
};

/** The queue a message came from (`arn:aws:sqs:<region>:<account>:<name>`), as its URL. */
const queueUrlOf = (record: SQSRecord): string => {
  const [, , , region, account, name] = record.eventSourceARN.split(":");
  return `https://sqs.${region}.amazonaws.com/${account}/${name}`;
};

/**
 * Time kept back from the function's own: a pass stops (its provider call aborted) this long before AWS would kill
 * the function, which leaves it the time to settle, let go of its lease and shorten its message's visibility.
 */
export const stageAnswerMarginMs = 10_000;

/**
 * The SQS stage function. A job to retry throws, so the event source returns the message to the queue; first its
 * visibility is shortened, so the retry comes in seconds rather than after six function timeouts.
 */
export const stageHandler =
  (ports: () => Promise<StageHandlerPorts & { sqs: SQSClient }>) => async (event: SQSEvent, context?: Pick<Context, "getRemainingTimeInMillis">) => {
    const built = await ports();
    for (const record of event.Records) {
      const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? 1);
      const deadline = context ? built.now().getTime() + context.getRemainingTimeInMillis() - stageAnswerMarginMs : undefined;
      const result = await runStageMessage(built, record.body, receiveCount, deadline).catch((error: unknown): Retry => {
        built.logger.error("processing job failed", { messageId: record.messageId, receiveCount, error: String(error) });
        return { kind: "retry" };
      });
      if (result !== "done") {
        await built.sqs
          .send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrlOf(record), ReceiptHandle: record.receiptHandle, VisibilityTimeout: retryDelaySeconds(receiveCount, result) }))
          .catch((error: unknown) => built.logger.warn("visibility not shortened", { error: String(error) }));
        throw new Error(`processing job ${record.messageId} will be retried`);
      }
    }
  };
