import type { ProviderContext, ProviderEntry } from "./provider-entry";
import type { Stage, StageProviders } from "./provider-port";
import type { Selection } from "./select-provider";

/**
 * The adapter for a selection made by selectProvider over the same providers (which guarantees the entry and its
 * adapter exist). The providers are the pass's: only the worker's composition imports the registry and its clients.
 */
export const buildProvider = <S extends Stage>(
  stage: S,
  selection: Extract<Selection, { ok: true }>,
  context: ProviderContext,
  providers: readonly ProviderEntry[],
): StageProviders[S] => {
  const factory = providers.find((e) => e.name === selection.provider)?.adapters[stage];
  if (!factory) throw new Error(`no ${stage} adapter for provider ${selection.provider}`);
  return factory(context, selection.model);
};
