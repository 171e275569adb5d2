/**
 * The processing queue's handlers, shared by the Lambda functions (`functions/process-queue.ts`,
 * `functions/dead-letter.ts`) and the Node host's consumers: a stage job runs one pass; a dead-lettered job
 * settles its pending stages `failed` (`dead_letter`). Both take a batch of 1.
 */
import { ChangeMessageVisibilityCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Context, SQSEvent, SQSRecord } from "aws-lambda";
import { failPendingStages } from "../processing/dead-letter";
import { handleJob, retryVisibilitySeconds } from "../processing/handle-job";
import { parseJob } from "../processing/parse-job";
import type { PassDeps } from "../processing/run-pass";
import { runInvocation } from "../invocation/run-invocation";
import type { Logger } from "../observability/logger";
import type { Dispatcher } from "../processing/dispatcher";
import { sweep } from "../processing/sweep";
import { deliverEvents } from "../webhooks/outbox";

/** A job run as one invocation: its correlation id on every line, counted SQL, one summary line. */
const asInvocation = <T>(name: string, pass: PassDeps, fields: Record<string, unknown>, fn: (pass: PassDeps) => Promise<T>) =>
  runInvocation({ name, deps: { logger: pass.log as Logger, sql: pass.sql }, fields }, ({ sql, log, annotate }) =>
    fn({ ...pass, sql, log }).then((result) => {
      annotate({ outcome: result ?? "done" });
      return result;
    }),
  );

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

/** One dead-letter message: the job's pending stages settle failed (dead_letter), with their events. */
export const runDeadLetterMessage = (pass: PassDeps, body: string): Promise<void> => {
  const job = parseJob(body);
  return asInvocation("dead-letter", pass, { ...job }, async (p) => {
    if (!job) {
      p.log.error("dead-letter message is not a job; dropped", { body: body.slice(0, 200) });
      return;
    }
    const events = await failPendingStages(p.sql, job, "dead_letter", p.now(), p.config.processing.webhooks.has(job.appId));
    p.log.warn("processing job dead-lettered", { ...job, stages: events.length });
    await deliverEvents({ sql: p.sql, webhooks: p.config.processing.webhooks, log: p.log, delivery: p.delivery }, events);
  });
};

/** The sweep as one invocation. */
export const runSweep = (pass: PassDeps, dispatcher: Dispatcher) =>
  asInvocation("sweep", pass, {}, (p) => sweep({ sql: p.sql, dispatcher, webhooks: p.config.processing.webhooks, log: p.log, delivery: p.delivery }, p.now()));

/** `arn:aws:sqs:<region>:<account>:<name>` as a queue URL, when PROCESSING_QUEUE_URL is not set. */
const queueUrlOf = (record: SQSRecord): string => {
  const [, , , region, account, name] = record.eventSourceARN.split(":");
  return `https://sqs.${region}.amazonaws.com/${account}/${name}`;
};

export interface StageHandlerPorts {
  pass: PassDeps;
  sqs: SQSClient;
  queueUrl?: string;
}

/**
 * The SQS stage function. A job to retry throws, so the event source returns the message to the queue; first its
 * visibility is shortened, so the retry comes in seconds rather than after six function timeouts.
 */
export const stageHandler = (ports: () => Promise<StageHandlerPorts>) => async (event: SQSEvent, context?: Pick<Context, "getRemainingTimeInMillis">) => {
  const { pass, sqs, queueUrl } = await ports();
  for (const record of event.Records) {
    const receiveCount = Number(record.attributes.ApproximateReceiveCount ?? 1);
    const deadline = context ? Date.now() + context.getRemainingTimeInMillis() : undefined;
    const result = await runStageMessage(pass, record.body, receiveCount, deadline).catch((error: unknown) => {
      pass.log.error("processing job failed", { messageId: record.messageId, receiveCount, error: String(error) });
      return "retry" as const;
    });
    if (result === "retry") {
      await sqs
        .send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl ?? queueUrlOf(record), ReceiptHandle: record.receiptHandle, VisibilityTimeout: retryVisibilitySeconds(receiveCount) }))
        .catch((error: unknown) => pass.log.warn("visibility not shortened", { error: String(error) }));
      throw new Error(`processing job ${record.messageId} will be retried`);
    }
  }
};

/** The dead-letter consumer function. */
export const deadLetterHandler = (ports: () => Promise<Pick<StageHandlerPorts, "pass">>) => async (event: SQSEvent) => {
  const { pass } = await ports();
  for (const record of event.Records) await runDeadLetterMessage(pass, record.body);
};
