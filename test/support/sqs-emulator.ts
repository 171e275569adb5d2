import type { AddressInfo } from "node:net";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { buildApp } from "fauxqs";
import { createSqsClient } from "../../core/dispatch/sqs-client";

/**
 * fauxqs on loopback (its start helper binds every interface), with a processing queue whose dead-letter queue
 * takes a message after 3 receives, as the AWS stack configures it.
 */
export const startSqsEmulator = async (opts: { visibilityTimeout?: number } = {}) => {
  const app = buildApp({ logger: false });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = createSqsClient("us-east-1", endpoint);
  const suffix = Math.random().toString(36).slice(2, 8);
  const dlq = await client.send(new CreateQueueCommand({ QueueName: `processing-dlq-${suffix}` }));
  const dlqArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }))).Attributes!.QueueArn!;
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: `processing-${suffix}`,
      Attributes: {
        VisibilityTimeout: String(opts.visibilityTimeout ?? 30),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
      },
    }),
  );
  /** Messages on a queue, visible, in flight (received, not yet deleted) or delayed: 0 once every one was handled. */
  const messagesOn = async (queueUrl: string): Promise<number> => {
    const names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"] as const;
    const { Attributes = {} } = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }));
    return names.reduce((n, name) => n + Number(Attributes[name] ?? 0), 0);
  };
  return {
    endpoint,
    client,
    queueUrl: queue.QueueUrl!,
    deadLetterQueueUrl: dlq.QueueUrl!,
    messagesOn,
    async close() {
      client.destroy();
      await app.close();
    },
  };
};
