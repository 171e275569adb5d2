/** SQS dispatch (PROCESSING_QUEUE_URL): one message per job, `{ appId, postId }` as JSON. */
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Dispatcher } from "../processing/dispatcher";

export const createSqsDispatcher = (client: SQSClient, queueUrl: string): Dispatcher => ({
  mode: "sqs",
  async dispatch(job) {
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ appId: job.appId, postId: job.postId }) }));
  },
});
