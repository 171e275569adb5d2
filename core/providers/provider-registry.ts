/**
 * Every provider this build knows, in first-available order per stage (CONTRACT.md section 11). Adding a real
 * provider is one entry: its name, stages, whether it is reachable only by name, when this deployment can run it,
 * and its adapters. Selection (select-provider.ts) reads only this table.
 */
import type { BlobStore } from "../blobs/blob-store";
import type { Config } from "../config/types";
import type { Stage, StageProviders } from "./provider-port";
import { TranscribeClient } from "@aws-sdk/client-transcribe";
import { createTranscribeTranscriber } from "./aws-transcribe/transcribe-transcriber";
import { createElevenLabsDenoiser } from "./elevenlabs/elevenlabs-denoiser";
import { createElevenLabsTranscriber } from "./elevenlabs/elevenlabs-transcriber";
import { createRenditionClient } from "./rendition/rendition-client";
import { createRenditionTrimmer } from "./rendition/rendition-trimmer";
import { createRenditionWaveformMaker } from "./rendition/rendition-waveform";
import { createRnnoiseDenoiser } from "./rendition/rnnoise-denoiser";
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

/** SVC_RENDITION_SERVICE_URL and SYSTEM_AUTH_TOKEN both set (rendition-target.ts). */
const renditionConfigured = (config: Config) => config.rendition !== undefined;

const renditionClient = ({ config }: ProviderContext) => createRenditionClient({ baseUrl: config.rendition!.url, token: config.rendition!.token });

const elevenLabs = ({ config, blobs }: ProviderContext) => ({
  baseUrl: config.processing.elevenLabsBaseUrl,
  apiKey: config.processing.elevenLabsApiKey!,
  blobs,
});

// One client per process; retries are the queue's, so the SDK makes one attempt per call.
let transcribe: TranscribeClient | undefined;
const transcribeClient = () => (transcribe ??= new TranscribeClient({ maxAttempts: 1 }));

export const providerRegistry: readonly ProviderEntry[] = [
  {
    name: "aws-transcribe",
    stages: ["transcribe"],
    explicitOnly: false,
    available: (config) => config.processing.platformTranscriber === "aws-transcribe" && config.blobs.kind === "s3",
    adapters: {
      transcribe: ({ config }, model) =>
        createTranscribeTranscriber({ client: transcribeClient(), bucket: (config.blobs as { bucket: string }).bucket, ...(model && { model }) }),
    },
  },
  {
    name: "elevenlabs",
    stages: ["transcribe", "denoise"],
    explicitOnly: false,
    available: (config) => config.processing.elevenLabsApiKey !== undefined,
    adapters: {
      transcribe: (context, model) => createElevenLabsTranscriber({ ...elevenLabs(context), ...(model && { model }) }),
      denoise: (context) => createElevenLabsDenoiser(elevenLabs(context)),
    },
  },
  {
    name: "rendition",
    stages: ["trim", "waveform"],
    explicitOnly: false,
    available: renditionConfigured,
    adapters: {
      trim: (context) => createRenditionTrimmer(renditionClient(context)),
      waveform: (context) => createRenditionWaveformMaker(renditionClient(context)),
    },
  },
  {
    name: "rnnoise",
    stages: ["denoise"],
    explicitOnly: true,
    available: renditionConfigured,
    adapters: { denoise: (context) => createRnnoiseDenoiser(renditionClient(context)) },
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
