/**
 * A provider with its adapters, as the worker pass is given them: the catalog entry (provider-catalog.ts) plus an
 * adapter factory for each stage it runs. The registry (provider-registry.ts) is the table of real ones; tests
 * give their own.
 */
import type { BlobStore } from "../blobs/blob-store";
import type { Config } from "../config/types";
import type { ProviderInfo } from "./provider-catalog";
import type { Stage, StageProviders } from "./provider-port";

/** What an adapter is built from: the whole configuration (keys, URLs, tokens) and the shared blob store. */
export interface ProviderContext {
  config: Config;
  blobs: BlobStore;
}

export type ProviderFactory<S extends Stage> = (context: ProviderContext, model?: string) => StageProviders[S];
export type ProviderFactories = { [S in Stage]?: ProviderFactory<S> };

export interface ProviderEntry extends ProviderInfo {
  /** The adapters, per stage; a stage listed without one is reported as a misconfiguration when chosen (tests). */
  adapters: ProviderFactories;
}
