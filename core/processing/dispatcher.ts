/**
 * Dispatch of processing jobs (docs/decisions.md#dispatch-and-the-worker): inline, an SQS queue, Google Cloud Tasks,
 * or off. In development and test the inline flag wins over every durable dispatcher; in production a durable
 * dispatcher wins over it.
 */
import type { Config } from "../config/types";
import type { Job } from "./job";

export type DispatchMode = "inline" | "sqs" | "tasks" | "off";

export interface Dispatcher {
  readonly mode: DispatchMode;
  /**
   * Queues the job; throws when it could not be queued (the caller answers 503 so the client retries). `from` names
   * the request that dispatched it: inline dispatch runs the pass inside it, under its id.
   */
  dispatch(job: Job, from?: { requestId?: string }): Promise<void>;
}

export const dispatchMode = (config: Config): DispatchMode => {
  const { inline, queueUrl, tasks } = config.processing;
  if (inline && !config.production) return "inline";
  if (queueUrl) return "sqs";
  if (tasks) return "tasks";
  return inline ? "inline" : "off";
};

export const offDispatcher: Dispatcher = {
  mode: "off",
  dispatch: async () => {},
};
