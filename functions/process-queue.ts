import { createSqsClient } from "../core/dispatch/sqs-client";
import { stageHandler } from "../core/runtime/jobs/stage-handler";
import { jobScopes } from "../core/runtime/lambda/function-scopes";
import { lambdaDeps } from "../core/runtime/lambda/lambda-deps";
import { lambdaWorker } from "../core/runtime/lambda/lambda-worker";
import { rdsDataSql } from "../core/runtime/lambda/rds-data-sql";
import { s3Blobs } from "../core/runtime/lambda/s3-blobs";

const lambdaPorts = lambdaDeps({ sql: rdsDataSql, blobs: s3Blobs, worker: lambdaWorker }, jobScopes.stage);

/** The SQS stage function: the processing queue's event source, batch size 1. */
export const handler = stageHandler(async () => {
  const { worker, logger, now, config } = await lambdaPorts();
  return { worker, logger, now, sqs: createSqsClient(config.aws.region) };
});
