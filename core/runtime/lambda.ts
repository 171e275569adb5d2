import type { Deps } from "../deps";
import type { RouteImpl } from "../http/route-call";
import { parseConfig } from "../config/parse-config";
import { createLogger } from "../observability/logger";
import { createS3BlobStore } from "../blobs/s3-blob-store";
import { openRdsData } from "../sql/rds-data";
import { createCustody } from "../tenancy/custody";
import { buildEnrichment } from "./build-enrichment";
import { lambdaHandler } from "./lambda-handler";
import { renditionsFor } from "../providers/rendition/mp3-rendition-builder";

/**
 * The Lambda composition root: the RDS Data API and S3, nothing else (no PGlite, no file store in a bundle).
 * Ports are built on the first invocation and reused by the warm container.
 */
let deps: Promise<Deps> | undefined;

export const lambdaDeps = (): Promise<Deps> =>
  (deps ??= (async () => {
    const config = parseConfig(process.env, createLogger("info"));
    const logger = createLogger(config.logLevel);
    if (config.database.kind !== "rds-data") throw new Error("Lambda functions use the RDS Data API: DATABASE_URL must be rds-data://");
    if (config.blobs.kind !== "s3") throw new Error("Lambda functions use S3: set SVC_BLOB_BUCKET, not SVC_BLOB_DIR");
    const sql = openRdsData({ ...config.database, connectMs: config.timeouts.dbConnectMs, requestMs: config.timeouts.dbStatementMs });
    const blobs = createS3BlobStore({ bucket: config.blobs.bucket });
    const now = () => new Date();
    return {
      config,
      sql,
      blobs,
      custody: createCustody({ pdsHost: config.pdsHost, log: logger }),
      logger,
      now,
      enrichment: buildEnrichment({ config, sql, blobs, logger, now }),
      ...renditionsFor(config.rendition),
    };
  })());

export const lambda = (impl: RouteImpl) => lambdaHandler(impl, lambdaDeps);
