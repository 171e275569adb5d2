/**
 * The one way into the worker: the SQS stage function, the Node host's queue consumer, inline dispatch and the
 * system route all run a job with `runJob(job, { attempt, maxAttempts, deadline })`, which runs one pass as an
 * invocation of its own (a correlation id on every line, counted SQL, one summary line with the outcome). What each
 * caller does with the outcome follows the one retry policy (retry-policy.ts).
 */
import { runInvocation } from "../invocation/run-invocation";
import type { Job } from "./job";
import { hasPendingStage } from "./pass-store";
import { runPass, type PassDeps, type PassOutcome } from "./run-pass";

export interface JobAttempt {
  /** 1 for the job's first delivery. */
  attempt: number;
  maxAttempts: number;
  /** Epoch ms by which the pass must stop (a Lambda's remaining time). */
  deadline?: number;
  /**
   * The id of the request the pass runs inside (inline dispatch, the system route), so its lines carry the request's
   * id (docs/decisions.md#envelope-and-errors); a job of its own (a queue delivery, a background retry) gets a fresh one.
   */
  requestId?: string;
}

/**
 * - `done`: the stages ran (`ran`), or there was nothing to do;
 * - `busy`: another pass holds the post's lease: this job is retried later, never dropped (retry-policy.ts);
 * - `retry`: a provider asked for a retry, or time ran out.
 */
export type JobOutcome = PassOutcome;

/** The worker port: built once per runtime over the pass's ports (core/runtime/enrichment/compose-worker.ts). */
export interface Worker {
  runJob(job: Job, attempt: JobAttempt): Promise<JobOutcome>;
}

/** Passes a job runs again for stages requested while it held the lease. */
const maxReruns = 2;

export const createWorker = (deps: PassDeps): Worker => ({
  runJob: (job, { attempt, maxAttempts, deadline, requestId }) =>
    runInvocation({ name: "run-job", deps: { logger: deps.log, sql: deps.sql }, requestId, fields: { ...job, attempt } }, async ({ sql, log, annotate }) => {
      const options = { finalAttempt: attempt >= maxAttempts, annotate, ...(deadline !== undefined && { deadline }) };
      let outcome = await runPass({ ...deps, sql, log }, job, options);
      // A stage requested after the pass last looked, whose job met the lease and was done, is this pass's to run:
      // look once more after letting go (a bounded number of times; the sweep covers the rest).
      for (let again = 0; outcome.kind === "done" && again < maxReruns && (await hasPendingStage(sql, job.appId, job.postId)); again++) {
        outcome = await runPass({ ...deps, sql, log }, job, options);
      }
      annotate({ outcome: outcome.kind });
      return outcome;
    }),
});
