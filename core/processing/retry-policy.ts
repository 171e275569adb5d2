/**
 * The one retry policy of jobs, whichever way they come (docs/decisions.md#dispatch-and-the-worker): a job is tried
 * at most `maxAttempts` times (SQS's receive count before the dead-letter queue, the system route's Cloud Tasks
 * retry count, inline dispatch's own count); on the last attempt a provider's request to retry settles the stage
 * failed instead. Between attempts the wait grows: 5 s, 20 s, 80 s... (SQS: the message's visibility), or is the
 * provider's `Retry-After` when that is longer.
 */
import type { Retry } from "./run-pass";
import type { JobOutcome } from "./worker";

export interface RetryPolicy {
  maxAttempts: number;
  /** How long to wait after failed attempt `attempt` (1 for the first) before the next. */
  delayMs(attempt: number): number;
}

export const retryPolicy: RetryPolicy = {
  maxAttempts: 3,
  delayMs: (attempt) => Math.min(900_000, 5_000 * 4 ** Math.max(0, attempt - 1)),
};

/**
 * A job's outcome as what its queue does next: done, or a retry (with the provider's timing, if any). A job is
 * delivered again when a stage asked to be retried (or time ran out), and when it met another pass's live lease, as
 * the contract has it: retried later, never dropped. The holder runs what is pending when it looks again, but a stage
 * queued after its last look and before it let go would otherwise wait for the sweep. A duplicate of a long pass that
 * the queue gives up on is harmless: the dead-letter consumer leaves alone the stages a live lease covers.
 */
export const nextStep = (outcome: JobOutcome): "done" | Retry =>
  outcome.kind === "retry" ? outcome : outcome.kind === "busy" ? { kind: "retry" } : "done";

/**
 * The most a provider's `Retry-After` may hold a stage back: five minutes, well inside the sweep's lapse, so a
 * provider's long or mistaken hint delays a stage rather than strands it.
 */
export const maxProviderRetryAfterMs = 5 * 60_000;

/**
 * How long to wait after failed attempt `attempt`: the policy's wait, or the provider's `Retry-After` when it asked
 * for longer (up to maxProviderRetryAfterMs). Asked again sooner, a throttled provider refuses again, and the stage
 * spends its few attempts on refusals.
 */
export const retryDelayMs = (attempt: number, retry?: Retry, policy: RetryPolicy = retryPolicy): number =>
  Math.max(policy.delayMs(attempt), Math.min(retry?.retryAfterMs ?? 0, maxProviderRetryAfterMs));

/** The same wait in whole seconds, as SQS takes a message's visibility timeout. */
export const retryDelaySeconds = (attempt: number, retry?: Retry): number => Math.ceil(retryDelayMs(attempt, retry) / 1000);
