/** The Node host sweeps its blob store for debris at start and then every `SVC_STORE_JANITOR_INTERVAL_MS`. */
import type { Deps } from "../../deps";
import { runStoreJanitor } from "../jobs/store-janitor-job";

export const startStoreJanitor = (deps: Deps) => {
  const sweep = () => runStoreJanitor(deps).then(() => {}, () => {}); // logged by the invocation
  // One sweep at a time: the next waits for the one before.
  let running = sweep();
  const timer = setInterval(() => void (running = running.then(sweep)), deps.config.storeJanitor.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
};
