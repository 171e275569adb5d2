/**
 * One sweep of the blob store for debris as one invocation (docs/operations.md#debris-in-the-blob-store): the Node
 * host's timer runs it, and on AWS the hourly janitor function.
 */
import { sweepStore } from "../../audio/store-janitor";
import type { Deps } from "../../deps";
import { runInvocation } from "../../invocation/run-invocation";

export type StoreJanitorDeps = Pick<Deps, "config" | "logger" | "sql" | "blobs" | "now">;

export const runStoreJanitor = (deps: StoreJanitorDeps) => {
  const { stagingMaxAgeMs, orphanMinAgeMs } = deps.config.storeJanitor;
  return runInvocation({ name: "store-janitor", deps: { logger: deps.logger, sql: deps.sql } }, async ({ sql, annotate }) => {
    const swept = await sweepStore({ store: deps.blobs, sql, now: deps.now().getTime(), stagingMaxAgeMs, orphanMinAgeMs });
    annotate({ ...swept });
    return swept;
  });
};
