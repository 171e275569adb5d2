/**
 * Inline dispatch (SVC_PROCESSING_INLINE=true): the job runs inside the create or PATCH request, before it answers.
 * A job to retry (retry-policy.ts) is tried again in the background after the policy's wait (or the provider's
 * `Retry-After`, when longer), up to its last attempt; if this process ends first, the sweep dispatches the lapsed
 * stages again.
 */
import type { Dispatcher } from "./dispatcher";
import type { Job } from "./job";
import { nextStep, retryDelayMs, retryPolicy, type RetryPolicy } from "./retry-policy";
import type { Worker } from "./worker";

export const createInlineDispatcher = (worker: Worker, track: (work: Promise<unknown>) => void, policy: RetryPolicy = retryPolicy): Dispatcher => {
  const run = async (job: Job, attempt: number, requestId?: string): Promise<void> => {
    const outcome = await worker.runJob(job, { attempt, maxAttempts: policy.maxAttempts, ...(requestId !== undefined && { requestId }) });
    const step = nextStep(outcome);
    if (step === "done" || attempt >= policy.maxAttempts) return;
    const later = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        // A failed attempt was logged by its invocation; the next one, if any, is up to the sweep. A retry runs after
        // the request answered, so it is no line of that request: it gets an id of its own.
        run(job, attempt + 1).catch(() => undefined).finally(resolve);
      }, retryDelayMs(attempt, step, policy));
      timer.unref?.();
    });
    track(later);
  };
  return {
    mode: "inline",
    // The first attempt runs inside the request that dispatched it, so its lines carry that request's id.
    dispatch: (job, from) => run(job, 1, from?.requestId),
  };
};
