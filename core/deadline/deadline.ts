import { AsyncLocalStorage } from "node:async_hooks";
import { DomainError } from "../domain-error";

/**
 * The time by which the current invocation must have answered. Work that waits or retries (the Data API's wake-up
 * retries) asks how much is left, so it gives up while there is still time to answer 503 instead of being cut off
 * by the Lambda timeout or API Gateway's 30 s.
 */
const deadlines = new AsyncLocalStorage<number>();

/** Milliseconds left before the current invocation's deadline; undefined outside one. */
export const remainingMs = (): number | undefined => {
  const at = deadlines.getStore();
  return at === undefined ? undefined : at - Date.now();
};

/** The 503 of a request still running at its deadline: its outcome is unknown, not failed (`fn` may yet finish). */
export class DeadlinePassed extends DomainError {
  constructor(ms: number) {
    super("SERVICE_UNAVAILABLE", `the request did not finish within ${ms} ms; retry later`);
  }
}

/**
 * Runs `fn` with a deadline `ms` from now (none when undefined): past it the answer is 503 SERVICE_UNAVAILABLE at
 * once, whatever `fn` is still waiting on. `fn` is not cancelled; its late result is dropped.
 * `publish`: whether `remainingMs()` tells `fn`'s work the deadline. Only where something reads it: an async
 * context costs every promise of the request a hook (about 8% of a GET's CPU on the Node host over Postgres).
 */
export const withinDeadline = <T>(ms: number | undefined, fn: () => Promise<T>, { publish = true } = {}): Promise<T> => {
  if (ms === undefined) return fn();
  const at = Date.now() + ms;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new DeadlinePassed(ms)),
      Math.max(0, ms),
    );
    (publish ? deadlines.run(at, fn) : fn())
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });
};

/** The deadline of one invocation: the configured one, cut to what a Lambda has left less a second to answer in. */
export const invocationDeadlineMs = (configuredMs: number | undefined, lambdaRemainingMs?: number): number | undefined => {
  if (lambdaRemainingMs === undefined) return configuredMs;
  const lambdaMs = Math.max(0, lambdaRemainingMs - 1_000);
  return configuredMs === undefined ? lambdaMs : Math.min(configuredMs, lambdaMs);
};
