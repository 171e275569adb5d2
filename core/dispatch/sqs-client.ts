import { SQSClient } from "@aws-sdk/client-sqs";

/**
 * The SQS client in the configured region: the SDK reads the rest of its environment itself (AWS_ENDPOINT_URL_SQS for
 * an emulator), unless an explicit endpoint is given (tests point it at a loopback fauxqs).
 */
export const createSqsClient = (region: string, endpoint?: string): SQSClient =>
  new SQSClient({
    ...(endpoint && { endpoint, credentials: { accessKeyId: "test", secretAccessKey: "test" } }),
    region,
  });
