/**
 * The processing queue's stage handler, shared by the Lambda stage function (`functions/process-queue.ts`) and the
 * Node host's consumer: a stage job runs one pass. It takes a batch of 1. The dead-letter and sweep handlers
 * (settle-jobs.ts) run no pass, so their functions bundle no providers.
 */
import { ChangeMessageVisibilityCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSEvent, SQSRecord } from "aws-lambda";
import { handleJob, retryVisibilitySeconds } from "../../processing/handle-job";
import { parseJob } from "../../processing/parse-job";
import type { PassDeps } from "../../processing/run-pass";
import { asInvocation } from "./job-invocation";

/** One stage-queue message: "retry" leaves it on the queue. A body that is not a job is dropped with an error log. */
export const runStageMessage = (pass: PassDeps, body: string, receiveCount: number, deadline?: number): Promise<"done" | "retry"> => {
  const job = parseJob(body);
  return asInvocation("process-queue", pass, { receiveCount, ...job }, async (p) => {
    if (!job) {
      p.log.error("processing message is not a job; dropped", { body: body.slice(0, 200) });
      return "done";
    }
    return handleJob(p, job, { receiveCount, ...(deadline !== undefined && { deadline }) });
  });
};

/** The queue a message came from (`arn:aws:sqs:<region>:<account>:<name>`), as its URL. */
const queueUrlOf = (record: SQSRecord): string => {
  const [, , , region, account, name] = record.eventSourceARN.split(":");
  return `https://sqs.${region}.amazonaws.com/${account}/${name}`;
};

export interface StageHandlerPorts {
  pass: PassDeps;
  sqs: SQSClient;
}

/**
 * The SQS stage function. A job to retry throws, so the event source returns the message to the queue; first its
 * visibility is shortened, so the retry comes in seconds rather than after six function timeouts.
 */
export const stageHandler = (ports: () => Promise<StageHandlerPorts>) => async (event: SQSEvent, context?: Pick<Context, "getRemainingTimeInMillis">) => {
  const { pass, sqs } = await ports();
  for (const record of event.Records) {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? 1);
    const deadline = context ? Date.now() + context.getRemainingTimeInMillis() : undefined;
    const result = await runStageMessage(pass, record.body, receiveCount, deadline).catch((error: unknown) => {
      pass.log.error("processing job failed", { messageId: record.messageId, receiveCount, error: String(error) });
      return "retry" as const;
    });
    if (result === "retry") {
      await sqs
        .send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrlOf(record), ReceiptHandle: record.receiptHandle, VisibilityTimeout: retryVisibilitySeconds(receiveCount) }))
        .catch((error: unknown) => pass.log.warn("visibility not shortened", { error: String(error) }));
      throw new Error(`processing job ${record.messageId} will be retried`);
    }
  }
};
