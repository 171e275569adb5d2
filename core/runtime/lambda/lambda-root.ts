import { processEnvironment } from "../../config/environment";
import { configured, parseConfig } from "../../config/parse-config";
import type { VariableScope } from "../../config/variable-scopes";
import type { Deps, PortName } from "../../deps";
import type { RouteDef } from "../../http/route";
import type { RouteImpl } from "../../http/route-call";
import { createLogger } from "../../observability/logger";
import type { Sql } from "../../sql/port";
import { createCustody } from "../../tenancy/custody";
import { sqlCustodyProofs } from "../../tenancy/custody-proofs";
import { routeScopes } from "./function-scopes";
import { lambdaHandler, type ApiGatewayHandler } from "./lambda-handler";
import { loadSstConfig } from "./sst-config";
import type { PortLoaders } from "./port-loader";

/**
 * The Lambda composition root: configuration (requiring the variables of the function's `scopes` only), logger and
 * custody, plus exactly the ports given loaders for, built in the order given. Built on the first call and reused by the warm container; a failed build (a cold Aurora, a bad
 * variable) is retried by the next call rather than cached. Job functions (queue, sweep) use it directly:
 * `const deps = lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs, enrichment: lambdaEnrichment }, jobScopes.stage)`.
 */
export const lambdaDeps = <U extends PortName>(loaders: PortLoaders<U>, scopes: readonly VariableScope[]): (() => Promise<Deps>) => {
  let deps: Promise<Deps> | undefined;
  const build = async (): Promise<Deps> => {
    const env = processEnvironment();
    await loadSstConfig(env);
    const config = parseConfig(env, createLogger("info"), scopes);
    const logger = createLogger(config.logLevel);
    const built: Record<string, unknown> = { logger, now: () => new Date() };
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

/** One route's Lambda: a loader for each port in its `uses` (`{ sql: rdsDataSql, blobs: s3Blobs }`), checked by the compiler. */
export const lambda = <R extends RouteDef>(impl: RouteImpl<R>, loaders: PortLoaders<R["uses"][number]>): ApiGatewayHandler => {
  const missing = impl.route.uses.filter((name) => !(name in loaders));
  if (missing.length) throw new Error(`${impl.route.file}: no Lambda loader for the ports ${missing.join(", ")} its route uses`);
  return lambdaHandler(impl, lambdaDeps(loaders, routeScopes(impl.route)));
};
