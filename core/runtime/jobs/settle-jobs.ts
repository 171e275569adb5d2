/**
 * The jobs that settle and re-dispatch but run no pass, shared by their Lambda functions (`functions/dead-letter.ts`,
 * `functions/sweep.ts`) and the Node host: a dead-lettered job settles its pending stages `failed` (`dead_letter`);
 * the sweep re-dispatches lapsed stages and delivers webhook events left undelivered. They import no provider.
 */
import type { SQSEvent } from "aws-lambda";
import { failPendingStages } from "../../processing/dead-letter";
import type { Dispatcher } from "../../processing/dispatcher";
import { parseJob } from "../../processing/parse-job";
import { sweep } from "../../processing/sweep";
import { deliverEvents } from "../../webhooks/outbox";
import { asInvocation, type JobDeps } from "./job-invocation";

/** One dead-letter message: the job's pending stages settle failed (dead_letter), with their events. */
export const runDeadLetterMessage = (pass: JobDeps, body: string): Promise<void> => {
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
export const runSweep = (pass: JobDeps, dispatcher: Dispatcher) =>
  asInvocation("sweep", pass, {}, (p) => sweep({ sql: p.sql, dispatcher, webhooks: p.config.processing.webhooks, log: p.log, delivery: p.delivery }, p.now()));

/** The dead-letter consumer function. */
export const deadLetterHandler = (ports: () => Promise<{ pass: JobDeps }>) => async (event: SQSEvent) => {
  const { pass } = await ports();
  for (const record of event.Records) await runDeadLetterMessage(pass, record.body);
};
