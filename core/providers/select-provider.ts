/**
 * Which provider runs a stage for a tenant (docs/decisions.md#providers):
 * SVC_PROCESSING_STUB=true overrides everything; otherwise the tenant pin, then the deployment default, then the
 * first available provider. A named provider that is unknown, not configured or without an adapter for the stage
 * is a misconfiguration (logged at error level, no fallback); `stub` is reachable only by name.
 *
 * Selection reads the catalog by default, so request-time planning bundles no adapter; the worker passes the
 * registry, whose adapters (one per listed stage, by its type) make both choose alike.
 */
import type { ProviderValue } from "../config/processing-config";
import { processingVariables } from "../config/processing-config";
import type { Config } from "../config/types";
import { providerCatalog, providerModelDefault, type ProviderInfo } from "./provider-catalog";
import type { Stage } from "./provider-port";
import type { ProviderFactories } from "./provider-entry";
import type { Logger } from "../observability/logger";

export type Selection =
  | { ok: true; provider: string; model?: string }
  | { ok: false; reason: "no_provider" | "provider_misconfigured" };

/** A catalog entry, or a registry entry with its adapters (the worker, tests). */
export type ProviderChoice = ProviderInfo & { adapters?: ProviderFactories };

/** A catalog entry stands for the registry's, which has an adapter for every stage it lists. */
const hasAdapter = (entry: ProviderChoice, stage: Stage): boolean => !entry.adapters || entry.adapters[stage] !== undefined;

/** Only transcription has models; a model pin on another stage is ignored (and warned about when parsed). */
const stagesWithModels: readonly Stage[] = ["transcribe"];

export const selectProvider = (
  stage: Stage,
  appId: string,
  config: Config,
  log: Pick<Logger, "error">,
  registry: readonly ProviderChoice[] = providerCatalog,
): Selection => {
  const { processing } = config;
  if (processing.stub) return { ok: true, provider: "stub" };

  const pin = processing.tenantPins[stage].get(appId);
  const fallbackDefault = processing.defaults[stage];
  const named = pin
    ? { value: pin, variable: processingVariables.pins[stage] }
    : fallbackDefault
      ? { value: fallbackDefault, variable: processingVariables.defaults[stage] }
      : undefined;

  if (named) {
    const entry = registry.find((e) => e.name === named.value.provider);
    const problem = !entry
      ? "names an unknown provider"
      : !entry.stages.includes(stage)
        ? `names a provider that cannot ${stage}`
        : !entry.available(config)
          ? "names a provider that is not configured on this deployment"
          : !hasAdapter(entry, stage)
            ? "names a provider whose adapter is not in this build"
            : undefined;
    if (problem) {
      log.error(`${named.variable} ${problem}: ${stage} is unavailable${pin ? ` for tenant "${appId}"` : ""}`, {
        variable: named.variable,
        stage,
        provider: named.value.provider,
        ...(pin && { appId }),
      });
      return { ok: false, reason: "provider_misconfigured" };
    }
    return withModel(stage, appId, named.value, config);
  }

  const first = registry.find((e) => !e.explicitOnly && e.stages.includes(stage) && hasAdapter(e, stage) && e.available(config));
  return first ? withModel(stage, appId, { provider: first.name }, config) : { ok: false, reason: "no_provider" };
};

/** Model precedence: tenant model pin, the chosen value's model, the deployment default's (same provider), the provider variable. */
const withModel = (stage: Stage, appId: string, value: ProviderValue, config: Config): Selection => {
  if (!stagesWithModels.includes(stage)) return { ok: true, provider: value.provider };
  const deployment = config.processing.defaults[stage];
  const model =
    config.processing.tenantSttModels.get(appId) ??
    value.model ??
    (deployment?.provider === value.provider ? deployment.model : undefined) ??
    providerModelDefault(value.provider, config);
  return model === undefined ? { ok: true, provider: value.provider } : { ok: true, provider: value.provider, model };
};
