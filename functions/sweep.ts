import { lambdaEnrichment } from "../core/runtime/lambda/lambda-enrichment";
import { lambdaDeps } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";
import { runSweep } from "../core/runtime/queue-handlers";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs, enrichment: lambdaEnrichment });

/** The scheduled sweep (every 5 minutes on AWS): lapsed pending stages, and webhook events left undelivered. */
export const handler = async () => {
  const deps = await lambdaPorts();
  return runSweep(deps.enrichment.pass, deps.enrichment.dispatcher);
};
