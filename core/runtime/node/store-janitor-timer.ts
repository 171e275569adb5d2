/** The Node host sweeps its blob store for debris at start and then every `SVC_STORE_JANITOR_INTERVAL_MS`. */
import { sweepStore } from "../../audio/store-janitor";
import type { Deps } from "../../deps";
import { runInvocation } from "../../invocation/run-invocation";

export const startStoreJanitor = (deps: Deps) => {
  const { intervalMs, stagingMaxAgeMs, orphanMinAgeMs } = deps.config.storeJanitor;
  const sweep = () =>
    runInvocation({ name: "store-janitor", deps: { logger: deps.logger, sql: deps.sql } }, async ({ sql, annotate }) => {
      annotate({ ...(await sweepStore({ store: deps.blobs, sql, now: deps.now().getTime(), stagingMaxAgeMs, orphanMinAgeMs })) });
    }).catch(() => {}); // logged by the invocation
  // One sweep at a time: the next waits for the one before.
  let running = sweep();
  const timer = setInterval(() => void (running = running.then(sweep)), intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
};
