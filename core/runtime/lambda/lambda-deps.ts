import { processEnvironment } from "../../config/environment";
import { configured, parseConfig } from "../../config/parse-config";
import type { VariableScope } from "../../config/variable-scopes";
import type { Deps, PortName } from "../../deps";
import { systemClock } from "../../system-clock";
import { createLogger } from "../../observability/logger";
import type { Sql } from "../../sql/port";
import { createCustody } from "../../tenancy/custody";
import { sqlCustodyProofs } from "../../tenancy/custody-proofs";
import type { PortLoaders } from "./port-loader";
import { loadSstConfig } from "./sst-config";

/**
 * What a Lambda function runs with: configuration (requiring the variables of the function's `scopes` only), logger
 * and custody, plus exactly the ports given loaders for, built in the order given. Built on the first call and
 * reused by the warm container; a failed build (a cold Aurora, a bad variable) is retried by the next call rather
 * than cached. A route's root adds the HTTP pipeline (lambda-root.ts); a job's root uses this alone, so its bundle
 * carries no HTTP middleware: `lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs, worker: lambdaWorker }, jobScopes.stage)`.
 */
export const lambdaDeps = <U extends PortName>(loaders: PortLoaders<U>, scopes: readonly VariableScope[]): (() => Promise<Deps>) => {
  let deps: Promise<Deps> | undefined;
  const build = async (): Promise<Deps> => {
    const env = processEnvironment();
    await loadSstConfig(env);
    const config = parseConfig(env, createLogger("info"), scopes);
    const logger = createLogger(config.logLevel);
    const built: Record<string, unknown> = { logger, now: systemClock };
    for (const [name, load] of Object.entries(loaders) as [string, (c: typeof config, b: typeof built) => Promise<unknown>][]) {
      built[name] = await load(config, built);
    }
    // Ports without a loader are absent: a handler's types (by its route's uses) already forbid reaching for them.
    // Only a function that serves tenants is given SVC_PDS_HOST; no other one proves custody.
    const custody =
      config.pdsHost === undefined
        ? { prove: async () => void configured(config.pdsHost, "SVC_PDS_HOST") }
        : createCustody({ pdsHost: config.pdsHost, log: logger, ...(built.sql ? { proofs: sqlCustodyProofs(built.sql as Sql) } : {}) });
    return { ...built, config, custody } as unknown as Deps;
  };
  return () => (deps ??= build().catch((error) => ((deps = undefined), Promise.reject(error))));
};
