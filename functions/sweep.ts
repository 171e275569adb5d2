import { sweep } from "../core/processing/sweep";
import { lambdaEnrichment } from "../core/runtime/lambda/lambda-enrichment";
import { lambdaDeps } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs, enrichment: lambdaEnrichment });

/** The scheduled sweep (every 5 minutes on AWS): lapsed pending stages, and webhook events left undelivered. */
export const handler = async () => {
  const deps = await lambdaPorts();
  const { pass, dispatcher } = deps.enrichment;
  const result = await sweep({ sql: pass.sql, dispatcher, webhooks: deps.config.processing.webhooks, log: pass.log }, deps.now());
  deps.logger.info("sweep", { ...result });
  return result;
};
