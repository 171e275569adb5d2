/**
 * What each function reaches, as the variable table's scopes (core/config/variable-scopes.ts): a route's follow
 * from its `uses`, its auth, its `reads` and its `rateLimit`; the jobs name theirs. The Lambda root parses with them and the stacks
 * give each function the variables and permissions of exactly these.
 */
import type { VariableScope } from "../../config/variable-scopes";
import type { PortName } from "../../deps";
import type { RouteDef } from "../../http/route";

/**
 * What each port of `uses` reaches: `enrichment` chooses providers, writes webhook events and dispatches; `worker`
 * chooses providers and runs their stages, and writes webhook events.
 */
const portScopes: Record<PortName, readonly VariableScope[]> = {
  sql: ["sql"],
  blobs: ["blobs"],
  enrichment: ["dispatch", "providers", "webhooks"],
  worker: ["stages", "providers", "webhooks"],
  renditions: ["renditions"],
  storeProbes: ["probes"],
};

export const routeScopes = (route: Pick<RouteDef, "uses" | "auth" | "reads" | "rateLimit">): VariableScope[] => {
  const scopes = new Set<VariableScope>(["http", ...route.uses.flatMap((port) => portScopes[port]), ...(route.reads ?? [])]);
  if (route.rateLimit) scopes.add("limits");
  if (route.auth === "actor" || route.auth === "viewer") scopes.add("tenants");
  if (route.auth === "system") scopes.add("system");
  return [...scopes];
};

/**
 * The functions that are not routes: the queue's stage function, the dead-letter consumer, the sweep, the store
 * janitor, migrations.
 */
export const jobScopes = {
  // The stage function dispatches nothing: a retry shortens the visibility of the message it received, on the
  // queue the event names, which its event source already lets it do.
  stage: ["sql", "blobs", "providers", "webhooks", "stages"],
  deadLetter: ["sql", "webhooks"],
  sweep: ["sql", "dispatch", "webhooks"],
  storeJanitor: ["sql", "blobs", "janitor"],
  migrate: ["sql"],
} as const satisfies Record<string, readonly VariableScope[]>;
