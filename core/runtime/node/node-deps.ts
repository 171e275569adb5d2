import path from "node:path";
import type { BlobStore } from "../../blobs/blob-store";
import { configured } from "../../config/parse-config";
import type { Config } from "../../config/types";
import type { Deps } from "../../deps";
import type { Logger } from "../../observability/logger";
import { migrate } from "../../sql/migrate";
import { openSql } from "../../sql/open-sql";
import type { SqlBackend } from "../../sql/port";
import { createCustody } from "../../tenancy/custody";
import { sqlCustodyProofs } from "../../tenancy/custody-proofs";
import { portStoreProbes } from "../../health/store-probes";
import { composeEnrichment, type EnrichmentOverrides } from "../enrichment/compose-enrichment";
import { composeWorker } from "../enrichment/compose-worker";
import { backgroundWork } from "../../processing/enrichment";
import { createInlineDispatcher } from "../../processing/inline-dispatcher";
import { renditionsFor } from "../../providers/rendition/mp3-rendition-builder";
import { systemClock } from "../../system-clock";

export const migrationsDir = path.resolve(import.meta.dirname, "../../../migrations");

/** The Node host's composition root: any of the three SQL backends, the file or S3 blob store. */
export const createNodeDeps = async (
  config: Config,
  logger: Logger,
  overrides: Partial<Pick<Deps, "custody" | "now">> & { sql?: SqlBackend; blobs?: BlobStore; enrichment?: EnrichmentOverrides } = {},
): Promise<Deps & { sql: SqlBackend }> => {
  const sql = overrides.sql ?? (await openSql(configured(config.database, "DATABASE_URL"), config.timeouts));
  await migrate(sql, migrationsDir);
  const blobs = overrides.blobs ?? (await openBlobStore(config));
  const now = overrides.now ?? systemClock;
  // One worker per process: the queue consumers, the system route and inline dispatch all run jobs on it. Its
  // webhook deliveries run in the background, so an inline create or PATCH never waits on a receiver.
  const background = backgroundWork();
  // One mp3 builder for playback and the worker: a playback during the pass's build of the same rendition joins it.
  const { renditions } = renditionsFor(config.rendition);
  const worker = composeWorker({ config, sql, blobs, logger, now, background: background.track, renditions }, overrides.enrichment);
  return {
    config,
    sql,
    blobs,
    // Proofs kept in the database, as the Lambdas keep theirs: a restart during a document outage keeps the grace.
    custody: overrides.custody ?? createCustody({ pdsHost: configured(config.pdsHost, "SVC_PDS_HOST"), log: logger, proofs: sqlCustodyProofs(sql) }),
    logger,
    now,
    storeProbes: portStoreProbes(sql, blobs),
    enrichment: composeEnrichment({ config, sql, logger }, overrides.enrichment, (track) => createInlineDispatcher(worker, track, overrides.enrichment?.retry), background),
    worker,
    ...(renditions && { renditions }),
  };
};

const openBlobStore = async (config: Config): Promise<BlobStore> => {
  const blobs = configured(config.blobs, "SVC_BLOB_DIR");
  if (blobs.kind === "fs") {
    const { createFsBlobStore } = await import("../../blobs/fs-blob-store");
    return createFsBlobStore(blobs.dir);
  }
  const { createS3BlobStore } = await import("../../blobs/s3-blob-store");
  return createS3BlobStore({ bucket: blobs.bucket });
};
