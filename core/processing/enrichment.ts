/**
 * The enrichment port of the write routes (create, PATCH): decide each requested stage at request time, then, once
 * the write committed, deliver the request-time events (`skipped` settles) and dispatch the job when a stage is
 * pending. What runs the job is the worker (worker.ts), reached through the dispatcher.
 */
import type { Config } from "../config/types";
import type { Logger } from "../observability/logger";
import type { Stage } from "../providers/provider-port";
import type { ProviderChoice } from "../providers/select-provider";
import type { Sql } from "../sql/port";
import type { DeliveryOptions } from "../webhooks/deliver-webhook";
import { deliverEvents } from "../webhooks/outbox";
import type { ClaimedEvent } from "../webhooks/webhook-event";
import type { Dispatcher } from "./dispatcher";
import type { Job } from "./job";
import { planStages } from "./plan-stages";
import type { StageDecision } from "./stage-state";

export interface Enrichment {
  readonly dispatcher: Dispatcher;
  plan(appId: string, stages: readonly Stage[], log: Pick<Logger, "error">): StageDecision[];
  /** Whether settles of this tenant write webhook events. */
  webhooks(appId: string): boolean;
  /** `requestId`: the request's, for the inline pass it may run (its lines carry the request's id). */
  afterRequest(job: Job, result: { pending: boolean; events: ClaimedEvent[] }, log: Logger, requestId?: string): Promise<void>;
  /** Resolves when background work started so far (deliveries, inline retries) has finished. */
  drain(): Promise<void>;
}

/** Background work of a process (deliveries, inline retries), so tests and shutdown can wait for it. */
export const backgroundWork = () => {
  const running = new Set<Promise<unknown>>();
  return {
    running,
    track(work: Promise<unknown>) {
      running.add(work);
      void work.finally(() => running.delete(work));
    },
  };
};

export const createEnrichment = (opts: {
  config: Config;
  sql: Sql;
  dispatcher: Dispatcher;
  /** What planning chooses from: the provider catalog (the worker's providers in tests, so both choose alike). */
  providers?: readonly ProviderChoice[];
  delivery?: Partial<DeliveryOptions>;
  background: ReturnType<typeof backgroundWork>;
}): Enrichment => {
  const { config, sql, dispatcher } = opts;
  const { running: background, track } = opts.background;
  return {
    dispatcher,
    plan: (appId, stages, log) => planStages(stages, appId, config, dispatcher.mode !== "off", log, opts.providers),
    webhooks: (appId) => config.processing.webhooks.has(appId),
    async afterRequest(job, result, log, requestId) {
      // The events are in the outbox already; a slow receiver must not hold the response (the sweep backs this up).
      if (result.events.length) track(deliverEvents({ sql, webhooks: config.processing.webhooks, retry: config.processing.webhookRetry, log, delivery: opts.delivery }, result.events));
      if (result.pending) await dispatcher.dispatch(job, { requestId });
    },
    async drain() {
      while (background.size) await Promise.allSettled([...background]);
    },
  };
};
