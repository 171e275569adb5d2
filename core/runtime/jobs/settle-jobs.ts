/**
 * The jobs that settle and re-dispatch but run no pass, shared by their Lambda functions (`functions/dead-letter.ts`,
 * `functions/sweep.ts`) and the Node host: a dead-lettered job settles its pending stages `failed` (`dead_letter`);
 * the sweep re-dispatches lapsed stages and delivers webhook events left undelivered. They import no provider.
 */
import type { SQSEvent } from "aws-lambda";
import type { Config } from "../../config/types";
import { runInvocation } from "../../invocation/run-invocation";
import type { Logger } from "../../observability/logger";
import { failPendingStages } from "../../processing/dead-letter";
import type { Dispatcher } from "../../processing/dispatcher";
import { parseJob } from "../../processing/job";
import { sweep } from "../../processing/sweep";
import type { Sql } from "../../sql/port";
import type { DeliveryOptions } from "../../webhooks/deliver-webhook";
import { deliverEvents } from "../../webhooks/outbox";

/** What the settling jobs run with: no blobs, no providers. */
export interface SettleDeps {
  sql: Sql;
  config: Config;
  logger: Logger;
  now: () => Date;
  delivery?: Partial<DeliveryOptions>;
}

/** A job run as one invocation: its correlation id on every line, counted SQL, one summary line. */
const asInvocation = <T>(name: string, deps: SettleDeps, fields: Record<string, unknown>, fn: (sql: Sql, log: Logger) => Promise<T>) =>
  runInvocation({ name, deps: { logger: deps.logger, sql: deps.sql }, fields }, ({ sql, log, annotate }) =>
    fn(sql, log).then((result) => {
      annotate({ outcome: result ?? "done" });
      return result;
    }),
  );

/**
 * One dead-letter message: the job's pending stages settle failed (dead_letter), with their events. Given when the
 * job was sent (its SentTimestamp, which the redrive keeps), only the stages that became pending by then: one
 * requested later has its own job on the queue.
 */
export const runDeadLetterMessage = (deps: SettleDeps, body: string, sentAt?: Date): Promise<void> => {
  const job = parseJob(body);
  return asInvocation("dead-letter", deps, { ...job }, async (sql, log) => {
    if (!job) {
      log.error("dead-letter message is not a job; dropped", { body: body.slice(0, 200) });
      return;
    }
    const { webhooks } = deps.config.processing;
    const events = await failPendingStages(sql, job, "dead_letter", deps.now(), webhooks.has(job.appId), undefined, sentAt);
    // Stages a live lease covers are left to its pass (dead-letter.ts): `stages` counts those settled here.
    log.warn("processing job dead-lettered", { ...job, stages: events.length });
    await deliverEvents({ sql, webhooks, retry: deps.config.processing.webhookRetry, log, delivery: deps.delivery, now: deps.now }, events);
  });
};

/** When an SQS message was sent (its SentTimestamp attribute, epoch ms); undefined when it does not say. */
export const sentAtOf = (sentTimestamp: string | undefined): Date | undefined => {
  const ms = Number(sentTimestamp);
  return sentTimestamp && Number.isFinite(ms) && ms > 0 ? new Date(ms) : undefined;
};

/** The sweep as one invocation, within the time it has left (`remainingMs`: a Lambda's; unbounded without it). */
export const runSweep = (deps: SettleDeps, dispatcher: Dispatcher, remainingMs?: () => number) =>
  asInvocation("sweep", deps, {}, (sql, log) =>
    sweep({ sql, dispatcher, webhooks: deps.config.processing.webhooks, retry: deps.config.processing.webhookRetry, log, delivery: deps.delivery, remainingMs }, deps.now()),
  );

/** The dead-letter consumer function. */
export const deadLetterHandler = (ports: () => Promise<SettleDeps>) => async (event: SQSEvent) => {
  const deps = await ports();
  for (const record of event.Records) await runDeadLetterMessage(deps, record.body, sentAtOf(record.attributes?.SentTimestamp));
};
