import type { Stage, StageProviders } from "./provider-port";
import { providerRegistry, type ProviderContext, type ProviderEntry } from "./provider-registry";
import type { Selection } from "./select-provider";

/**
 * The adapter for a selection made by selectProvider over the same registry (which guarantees the entry and its
 * adapter exist). Its own module, so only the worker pass imports the registry and the providers' clients.
 */
export const buildProvider = <S extends Stage>(
  stage: S,
  selection: Extract<Selection, { ok: true }>,
  context: ProviderContext,
  registry: readonly ProviderEntry[] = providerRegistry,
): StageProviders[S] => {
  const factory = registry.find((e) => e.name === selection.provider)?.adapters[stage];
  if (!factory) throw new Error(`no ${stage} adapter for provider ${selection.provider}`);
  return factory(context, selection.model);
};
