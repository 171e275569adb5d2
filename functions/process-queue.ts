import { createSqsClient } from "../core/dispatch/sqs-client";
import { lambdaDeps } from "../core/runtime/lambda";
import { stageHandler } from "../core/runtime/queue-handlers";

/** The SQS stage function: the processing queue's event source, batch size 1. */
export const handler = stageHandler(async () => {
  const deps = await lambdaDeps();
  return { pass: deps.enrichment.pass, sqs: createSqsClient(), queueUrl: deps.config.processing.queueUrl };
});
