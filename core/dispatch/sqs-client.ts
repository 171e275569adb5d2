import { SQSClient } from "@aws-sdk/client-sqs";

/**
 * The SQS client: the standard AWS SDK environment (AWS_REGION, AWS_ENDPOINT_URL_SQS for an emulator), or an
 * explicit endpoint (tests point it at a loopback fauxqs).
 */
export const createSqsClient = (endpoint?: string): SQSClient =>
  new SQSClient({
    ...(endpoint && { endpoint, credentials: { accessKeyId: "test", secretAccessKey: "test" } }),
    region: process.env.AWS_REGION ?? "us-east-1",
  });
