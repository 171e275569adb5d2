import { createSqsClient } from "../core/dispatch/sqs-client";
import { jobScopes } from "../core/runtime/lambda/function-scopes";
import { lambdaEnrichment } from "../core/runtime/lambda/lambda-enrichment";
import { lambdaDeps } from "../core/runtime/lambda/lambda-root";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";
import { stageHandler } from "../core/runtime/jobs/queue-handlers";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs, enrichment: lambdaEnrichment }, jobScopes.stage);

/** The SQS stage function: the processing queue's event source, batch size 1. */
export const handler = stageHandler(async () => {
  const deps = await lambdaPorts();
  return { pass: deps.enrichment.pass, sqs: createSqsClient(deps.config.aws.region) };
});
