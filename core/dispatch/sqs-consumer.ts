/**
 * The Node host's SQS consumers (PROCESSING_QUEUE_URL, and the dead-letter queue when
 * PROCESSING_DEAD_LETTER_QUEUE_URL is set): batch size 1, long polling. A failed attempt shortens the message's
 * visibility (backoff) so the retry comes soon rather than after a whole visibility timeout. While a message is
 * handled its visibility is kept ahead (a heartbeat, as the pass keeps its lease), whatever the queue's own timeout:
 * a message that came back mid-pass went to another consumer, which met the lease and used up its receives, and the
 * pass's own retry then found it gone.
 */
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, type Message, type SQSClient } from "@aws-sdk/client-sqs";
import { retryDelaySeconds } from "../processing/retry-policy";
import type { Retry } from "../processing/run-pass";
import { longPollTimeoutMs } from "./sqs-client";
import type { Logger } from "../observability/logger";

/** Handles one message; a retry leaves it on the queue (for at least its `retryAfterMs`, when it has one). */
export type MessageHandler = (message: Message, receiveCount: number) => Promise<"done" | Retry>;

export const startSqsConsumer = (opts: {
  client: SQSClient;
  queueUrl: string;
  handle: MessageHandler;
  log: Pick<Logger, "warn" | "error">;
  /** Long-poll wait (seconds); tests use short ones. */
  waitSeconds?: number;
  retryVisibility?: (receiveCount: number, retry: Retry) => number;
  /** How long a received message stays invisible, renewed every third of it while it is handled (seconds). */
  holdSeconds?: number;
}) => {
  const { client, queueUrl, log } = opts;
  const abort = new AbortController();
  const retryVisibility = opts.retryVisibility ?? retryDelaySeconds;
  const holdSeconds = opts.holdSeconds ?? 60;
  const waitSeconds = opts.waitSeconds ?? 20;
  /** Keeps `message` invisible until stopped; a renewal that fails is logged, and the next one tries again. */
  const hold = (message: Message) => {
    const timer = setInterval(() => {
      client
        .send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: holdSeconds }))
        .catch((error: unknown) => log.warn("message visibility not extended", { queueUrl, messageId: message.MessageId, error: String(error) }));
    }, (holdSeconds * 1000) / 3);
    return () => clearInterval(timer);
  };
  const loop = (async () => {
    while (!abort.signal.aborted) {
      let messages: Message[] = [];
      try {
        const out = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 1,
            VisibilityTimeout: holdSeconds,
            WaitTimeSeconds: waitSeconds,
            // SentTimestamp: a dead-lettered job fails only the stages that were pending when it was sent.
            MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
          }),
          // The client's request timeout is a short call's: a long poll waits longer by design.
          { abortSignal: abort.signal, requestTimeout: longPollTimeoutMs(waitSeconds) },
        );
        messages = out.Messages ?? [];
      } catch (error) {
        if (abort.signal.aborted) break;
        log.error("queue receive failed", { queueUrl, error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      for (const message of messages) {
        const receiveCount = Number(message.Attributes?.ApproximateReceiveCount ?? 1);
        let result: "done" | Retry;
        const release = hold(message);
        try {
          result = await opts.handle(message, receiveCount);
        } catch (error) {
          log.error("processing job failed", { queueUrl, messageId: message.MessageId, receiveCount, error: String(error) });
          result = { kind: "retry" };
        } finally {
          release();
        }
        try {
          if (result === "done") {
            await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
          } else {
            await client.send(
              new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: retryVisibility(receiveCount, result) }),
            );
          }
        } catch (error) {
          log.warn("queue acknowledgement failed; the message comes back", { queueUrl, messageId: message.MessageId, error: String(error) });
        }
      }
    }
  })();
  return {
    async stop() {
      abort.abort();
      await loop.catch(() => {});
    },
  };
};
