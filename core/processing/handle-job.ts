/**
 * One queued job, the same on every consumer (the SQS stage function, the Node host's SQS consumer, the system
 * route): run the pass; "retry" asks the queue to deliver it again later.
 */
import { runPass, type Job, type PassDeps } from "./run-pass";

/** SQS receives a message at most this often before the dead-letter queue (docs/decisions.md#dispatch-and-the-worker). */
export const maxReceives = 3;

/** Seconds a failed attempt's message stays invisible: short, growing with each receive. */
export const retryVisibilitySeconds = (receiveCount: number): number => Math.min(900, 5 * 4 ** Math.max(0, receiveCount - 1));

export const handleJob = async (
  deps: PassDeps,
  job: Job,
  attempt: { receiveCount: number; deadline?: number },
): Promise<"done" | "retry"> => {
  const outcome = await runPass(deps, job, {
    finalAttempt: attempt.receiveCount >= maxReceives,
    ...(attempt.deadline !== undefined && { deadline: attempt.deadline }),
  });
  return outcome.kind === "done" ? "done" : "retry";
};
