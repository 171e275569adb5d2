/**
 * Every provider this build knows, in first-available order per stage (CONTRACT.md section 11). Adding a real
 * provider is one entry: its name, stages, whether it is reachable only by name, when this deployment can run it,
 * and its adapters. Selection (select-provider.ts) reads only this table.
 */
import type { BlobStore } from "../blobs/blob-store";
import type { Config } from "../config/types";
import type { Stage, StageProviders } from "./provider-port";
import { stubDenoiser, stubTranscriber, stubTrimmer, stubWaveformMaker } from "./stub-providers";

/** What an adapter is built from: the whole configuration (keys, URLs, tokens) and the shared blob store. */
export interface ProviderContext {
  config: Config;
  blobs: BlobStore;
}

export type ProviderFactories = { [S in Stage]?: (context: ProviderContext, model?: string) => StageProviders[S] };

export interface ProviderEntry {
  name: string;
  stages: readonly Stage[];
  /** Chosen only when a pin or default names it, never as the first available provider. */
  explicitOnly: boolean;
  /** Whether this deployment can run it. */
  available(config: Config): boolean;
  /** The adapters, per stage; a stage listed without one is reported as a misconfiguration when chosen. */
  adapters: ProviderFactories;
}

const renditionConfigured = (config: Config) => config.processing.renditionServiceUrl !== undefined && config.systemAuthToken !== undefined;

export const providerRegistry: readonly ProviderEntry[] = [
  {
    name: "aws-transcribe",
    stages: ["transcribe"],
    explicitOnly: false,
    available: (config) => config.processing.platformTranscriber === "aws-transcribe" && config.blobs.kind === "s3",
    adapters: {},
  },
  {
    name: "elevenlabs",
    stages: ["transcribe", "denoise"],
    explicitOnly: false,
    available: (config) => config.processing.elevenLabsApiKey !== undefined,
    adapters: {},
  },
  {
    name: "rendition",
    stages: ["trim", "waveform"],
    explicitOnly: false,
    available: renditionConfigured,
    adapters: {},
  },
  {
    name: "rnnoise",
    stages: ["denoise"],
    explicitOnly: true,
    available: renditionConfigured,
    adapters: {},
  },
  {
    name: "stub",
    stages: ["denoise", "trim", "transcribe", "waveform"],
    explicitOnly: true,
    available: () => true,
    adapters: {
      denoise: () => stubDenoiser,
      trim: () => stubTrimmer,
      transcribe: (_, model) => stubTranscriber(model),
      waveform: () => stubWaveformMaker,
    },
  },
];

/** The model variable of a provider, below a tenant or deployment pin (CONTRACT.md section 11). */
export const providerModelDefault = (provider: string, config: Config): string | undefined =>
  provider === "aws-transcribe" ? config.processing.platformSttModel : provider === "elevenlabs" ? config.processing.elevenLabsSttModel : undefined;
