/**
 * The one retry policy of jobs, whichever way they come (docs/decisions.md#dispatch-and-the-worker): a job is tried
 * at most `maxAttempts` times (SQS's receive count before the dead-letter queue, the system route's Cloud Tasks
 * retry count, inline dispatch's own count); on the last attempt a provider's request to retry settles the stage
 * failed instead. Between attempts the wait grows: 5 s, 20 s, 80 s... (SQS: the message's visibility).
 */
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
 * Whether a job must be delivered again: only when a stage asked to be retried (or time ran out). A job that met
 * another pass's live lease is done, not failed: the holder runs what is pending, and the sweep covers a holder that
 * dies. Counting it as a failure would dead-letter the duplicate of a long pass and fail that pass's stages.
 */
export const mustRetry = (outcome: JobOutcome): boolean => outcome.kind === "retry";

/** The same wait in seconds, as SQS takes a message's visibility timeout. */
export const retryDelaySeconds = (attempt: number): number => retryPolicy.delayMs(attempt) / 1000;
