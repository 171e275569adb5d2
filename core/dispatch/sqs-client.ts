import { SQSClient } from "@aws-sdk/client-sqs";

/**
 * Every SQS call is bounded: a connection in 1 s, an answer in 2 s, two attempts (about 5 s in all, the retry's
 * backoff included). Without a bound a stalled SendMessage never failed, so a create or PATCH ran into its deadline
 * (503) instead of leaving its job to the sweep, and a sweep was killed mid-send with its marks unsent. SQS answers
 * in milliseconds; two attempts leave a create room within its 9 s. A long poll's ReceiveMessage sets its own
 * (`longPollTimeoutMs`).
 */
export const sqsCallMs = { connect: 1_000, request: 2_000, attempts: 2 };

/** A long poll's request timeout: its wait, and the request's own bound beyond it. */
export const longPollTimeoutMs = (waitSeconds: number) => waitSeconds * 1000 + sqsCallMs.request;

/**
 * The SQS client in the configured region: the SDK reads the rest of its environment itself (AWS_ENDPOINT_URL_SQS for
 * an emulator), unless an explicit endpoint is given (tests point it at a loopback fauxqs).
 */
export const createSqsClient = (region: string, endpoint?: string): SQSClient =>
  new SQSClient({
    ...(endpoint && { endpoint, credentials: { accessKeyId: "test", secretAccessKey: "test" } }),
    region,
    maxAttempts: sqsCallMs.attempts,
    // As the Data API's client (core/sql/rds-data.ts): without throwOnRequestTimeout the handler only warns.
    requestHandler: { connectionTimeout: sqsCallMs.connect, requestTimeout: sqsCallMs.request, throwOnRequestTimeout: true },
  });
