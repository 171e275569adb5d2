/**
 * What request-time planning knows of each provider (docs/decisions.md#providers): its name, stages, whether it is
 * reachable only by name, and when this deployment can run it, in first-available order per stage. No adapter code:
 * a route that only plans and dispatches (create, PATCH) bundles this and not the providers' clients. The worker's
 * registry (provider-registry.ts) adds an adapter for every stage listed here.
 */
import type { Config } from "../config/types";
import { stageOrder, type Stage } from "./provider-port";

export interface ProviderInfo {
  name: string;
  stages: readonly Stage[];
  /** Chosen only when a pin or default names it, never as the first available provider. */
  explicitOnly: boolean;
  /** Whether this deployment can run it. */
  available(config: Config): boolean;
}

/** SVC_RENDITION_SERVICE_URL and SYSTEM_AUTH_TOKEN both set (rendition-target.ts). */
const renditionConfigured = (config: Config) => config.rendition !== undefined;

export const providerCatalog = [
  {
    name: "aws-transcribe",
    stages: ["transcribe"],
    explicitOnly: false,
    available: (config: Config) => config.processing.platformTranscriber === "aws-transcribe" && config.blobs?.kind === "s3",
  },
  { name: "elevenlabs", stages: ["transcribe", "denoise"], explicitOnly: false, available: (config: Config) => config.processing.elevenLabsApiKey !== undefined },
  { name: "rendition", stages: ["trim", "normalize", "waveform"], explicitOnly: false, available: renditionConfigured },
  { name: "rnnoise", stages: ["denoise"], explicitOnly: true, available: renditionConfigured },
  // Every stage: a new stage needs a stub before it can be tested.
  { name: "stub", stages: stageOrder, explicitOnly: true, available: () => true },
] as const satisfies readonly ProviderInfo[];

export type ProviderName = (typeof providerCatalog)[number]["name"];

/** The model variable of a provider, below a tenant or deployment pin (docs/decisions.md#providers). */
export const providerModelDefault = (provider: string, config: Config): string | undefined =>
  provider === "aws-transcribe" ? config.processing.platformSttModel : provider === "elevenlabs" ? config.processing.elevenLabsSttModel : undefined;
