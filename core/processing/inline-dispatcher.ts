/**
 * Inline dispatch (SVC_PROCESSING_INLINE=true): the pass runs inside the create or PATCH request, before it
 * answers. A pass that meets a live lease, or is asked to retry, is tried again in the background with backoff
 * (never dropped); if this process ends first, the sweep dispatches the lapsed stages again.
 */
import type { Dispatcher } from "./dispatcher";
import { runPass, type Job, type PassDeps } from "./run-pass";

export const inlineRetryDelaysMs = [250, 1000, 4000, 15_000, 60_000];

export const createInlineDispatcher = (deps: PassDeps, track: (work: Promise<unknown>) => void, delays = inlineRetryDelaysMs): Dispatcher => {
  const attempt = async (job: Job, retry: number): Promise<void> => {
    const outcome = await runPass(deps, job, { finalAttempt: retry >= delays.length });
    if (outcome.kind === "done" || retry >= delays.length) return;
    const later = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        attempt(job, retry + 1)
          .catch((error: unknown) => deps.log.error("inline processing pass failed", { ...job, error: String(error) }))
          .finally(resolve);
      }, delays[retry]);
      timer.unref?.();
    });
    track(later);
  };
  return {
    mode: "inline",
    dispatch: (job) => attempt(job, 0),
  };
};
