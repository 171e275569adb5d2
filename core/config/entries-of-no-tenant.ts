import type { Logger } from "../observability/logger";
import { stageOrder } from "../records/stages";
import { processingVariables, type ProcessingConfig } from "./processing-config";
import type { Tenant } from "./types";

/**
 * A per-tenant entry whose appId is no tenant of SVC_APP_TOKENS (a typo, `Alpha` for `alpha`, or a tenant removed)
 * is never used: warned about, naming the variable and the appId, as a tenant in only one of the tenant lists is.
 * Only where the tokens are read: a function without them (the stage worker) has nothing to compare with.
 */
export const warnEntriesOfNoTenant = (tenants: ReadonlyMap<string, Tenant>, processing: ProcessingConfig, log: Pick<Logger, "warn">): void => {
  const callers = new Set([...tenants.values()].filter((tenant) => tenant.token !== undefined).map((tenant) => tenant.appId));
  if (callers.size === 0) return;
  const lists: [variable: string, appIds: Iterable<string>][] = [
    ...stageOrder.map((stage): [string, Iterable<string>] => [processingVariables.pins[stage], processing.tenantPins[stage].keys()]),
    ["SVC_APP_STT_MODELS", processing.tenantSttModels.keys()],
    ["SVC_APP_WEBHOOK_URLS and SVC_APP_WEBHOOK_SECRETS", processing.webhooks.keys()],
  ];
  for (const [variable, appIds] of lists) {
    for (const appId of appIds) {
      if (!callers.has(appId)) log.warn(`${variable}: tenant "${appId}" is not in SVC_APP_TOKENS; its entry is unused`, { variable, appId });
    }
  }
};
