/**
 * The worker each runtime builds once (the Node host; on Lambda the stage function and the system route): the pass's
 * ports with every provider of the registry, so this module and the functions that import it carry the providers'
 * clients. Functions that only plan and dispatch use compose-enrichment.ts alone.
 */
import type { BlobStore } from "../../blobs/blob-store";
import type { Config } from "../../config/types";
import type { Logger } from "../../observability/logger";
import { createWorker, type Worker } from "../../processing/worker";
import type { ProviderEntry } from "../../providers/provider-entry";
import type { RenditionBuilder } from "../../providers/rendition-builder";
import { providerRegistry } from "../../providers/provider-registry";
import type { Sql } from "../../sql/port";
import type { DeliveryOptions } from "../../webhooks/deliver-webhook";

export interface EnrichmentPorts {
  config: Config;
  sql: Sql;
  blobs: BlobStore;
  logger: Logger;
  now: () => Date;
  /** A long-lived host's background work: the pass delivers webhooks there instead of awaiting them. */
  background?: (work: Promise<unknown>) => void;
  /** The mp3 renditions port, when the rendition service is configured: a pass builds the mp3 of the bytes it leaves. */
  renditions?: RenditionBuilder;
}

export interface WorkerOverrides {
  /** Providers other than the registry's (tests). */
  providers?: readonly ProviderEntry[];
  delivery?: Partial<DeliveryOptions>;
}

export const composeWorker = ({ config, sql, blobs, logger, now, background, renditions }: EnrichmentPorts, overrides: WorkerOverrides = {}): Worker =>
  createWorker({ sql, blobs, config, log: logger, now, providers: overrides.providers ?? providerRegistry, delivery: overrides.delivery, background, renditions });
