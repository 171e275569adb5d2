import type { RenditionBuilder } from "./audio/rendition-builder";
import type { BlobStore } from "./blobs/blob-store";
import type { Config, Tenant } from "./config/types";
import type { Logger } from "./observability/logger";
import type { Enrichment } from "./processing/enrichment";
import type { Sql } from "./sql/port";

/** The ports a handler gets; each runtime's composition root picks the adapters once. */
export interface Deps {
  config: Config;
  sql: Sql;
  blobs: BlobStore;
  custody: { prove(tenant: Tenant): Promise<void> };
  logger: Logger;
  now: () => Date;
  /** Request-time stage decisions, dispatch, and the worker pass's ports. */
  enrichment: Enrichment;
  /** Builds missing mp3 renditions; present only when the rendition service is configured. */
  renditions?: RenditionBuilder;
}
