import type { RenditionBuilder } from "./providers/rendition-builder";
import type { BlobStore } from "./blobs/blob-store";
import type { Config } from "./config/types";
import type { StoreProbes } from "./health/store-probes";
import type { Logger } from "./observability/logger";
import type { Enrichment } from "./processing/enrichment";
import type { Worker } from "./processing/worker";
import type { Sql } from "./sql/port";
import type { Tenant } from "./tenancy/tenant";

/**
 * The ports a route may declare in its `uses`: each runtime's composition root builds only those (the Lambda root
 * loads only their adapters), and the stacks grant each function only their permissions. A new port is a row here.
 */
export interface Ports {
  /** SQL (`core/sql/port.ts`): RDS Data API on Lambda; PGlite or Postgres on the Node host. */
  sql: Sql;
  /** The blob store (`core/blobs/blob-store.ts`): S3 on Lambda; the file store or S3 on the Node host. */
  blobs: BlobStore;
  /** The write routes' side of processing: request-time stage decisions, webhooks of skipped stages, dispatch. */
  enrichment: Enrichment;
  /** The worker: `runJob`, one pass over a post with the providers (built over `sql` and `blobs`). */
  worker: Worker;
  /** /health's probes of both stores: over `sql` and `blobs` on the Node host; one signed request each on Lambda. */
  storeProbes: StoreProbes;
  /** Builds missing mp3 renditions; absent unless the rendition service is configured (SVC_RENDITION_SERVICE_URL). */
  renditions?: RenditionBuilder;
}

export type PortName = keyof Ports;

/** What every invocation gets whatever its ports: configuration, custody proofs, the root logger, the clock. */
export interface CoreDeps {
  config: Config;
  custody: { prove(tenant: Tenant): Promise<void> };
  logger: Logger;
  now: () => Date;
}

/** Every port: what the Node host builds, and what the middleware chain sees. */
export type Deps = CoreDeps & Ports;

/** What a handler that declared `uses: U` gets. */
export type DepsFor<U extends PortName> = CoreDeps & Pick<Ports, U>;
