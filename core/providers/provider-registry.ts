/**
 * Every provider this build knows with its adapters: the catalog (provider-catalog.ts: names, stages, availability,
 * order) plus, for each provider, an adapter for every stage it lists (the type requires one). Adding a real
 * provider is one catalog entry and its adapters here. Only the worker's composition (compose-worker.ts) imports
 * this table, with every provider's client; request-time planning reads the catalog alone.
 */
import { TranscribeClient } from "@aws-sdk/client-transcribe";
import { createTranscribeTranscriber } from "./aws-transcribe/transcribe-transcriber";
import { createElevenLabsDenoiser } from "./elevenlabs/elevenlabs-denoiser";
import { createElevenLabsTranscriber } from "./elevenlabs/elevenlabs-transcriber";
import { providerCatalog, type ProviderName } from "./provider-catalog";
import type { ProviderContext, ProviderEntry, ProviderFactory } from "./provider-entry";
import { createRenditionClient } from "./rendition/rendition-client";
import { createRenditionNormalizer } from "./rendition/rendition-normalizer";
import { createRenditionTrimmer } from "./rendition/rendition-trimmer";
import { createRenditionWaveformMaker } from "./rendition/rendition-waveform";
import { createRnnoiseDenoiser } from "./rendition/rnnoise-denoiser";
import { stubDenoiser, stubNormalizer, stubTranscriber, stubTrimmer, stubWaveformMaker } from "./stub-providers";

const renditionClient = ({ config }: ProviderContext) => createRenditionClient({ baseUrl: config.rendition!.url, token: config.rendition!.token });

const elevenLabs = ({ config, blobs }: ProviderContext) => ({
  baseUrl: config.processing.elevenLabsBaseUrl,
  apiKey: config.processing.elevenLabsApiKey!,
  blobs,
});

// One client per process; retries are the queue's, so the SDK makes one attempt per call.
let transcribe: TranscribeClient | undefined;
const transcribeClient = () => (transcribe ??= new TranscribeClient({ maxAttempts: 1 }));

/** Exactly the stages each catalog entry lists, each with its adapter. */
type AdaptersOf = { [E in (typeof providerCatalog)[number] as E["name"]]: { [S in E["stages"][number]]: ProviderFactory<S> } };

const adapters: AdaptersOf = {
  "aws-transcribe": {
    transcribe: ({ config }, model) =>
      createTranscribeTranscriber({ client: transcribeClient(), bucket: (config.blobs as { bucket: string }).bucket, ...(model && { model }) }),
  },
  elevenlabs: {
    transcribe: (context, model) => createElevenLabsTranscriber({ ...elevenLabs(context), ...(model && { model }) }),
    denoise: (context) => {
      const { ffmpegPath } = context.config;
      return createElevenLabsDenoiser({ ...elevenLabs(context), ...(ffmpegPath !== undefined && { ffmpeg: ffmpegPath }) });
    },
  },
  rendition: {
    trim: (context) => createRenditionTrimmer(renditionClient(context)),
    normalize: (context) => createRenditionNormalizer(renditionClient(context)),
    waveform: (context) => createRenditionWaveformMaker(renditionClient(context)),
  },
  rnnoise: { denoise: (context) => createRnnoiseDenoiser(renditionClient(context)) },
  stub: {
    denoise: () => stubDenoiser,
    trim: () => stubTrimmer,
    normalize: () => stubNormalizer,
    transcribe: (_, model) => stubTranscriber(model),
    waveform: () => stubWaveformMaker,
  },
};

export const providerRegistry: readonly ProviderEntry[] = providerCatalog.map((info) => ({ ...info, adapters: adapters[info.name as ProviderName] }));
