/**
 * The processing queue's dead-letter queue, as its redrive policy names it: a Node host given only
 * PROCESSING_QUEUE_URL consumes it too, so a job the queue gives up on is settled `failed` (`dead_letter`) rather
 * than left pending until the sweep times it out.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";

export async function deadLetterQueueOf(client: Pick<SQSClient, "send">, queueUrl: string): Promise<string | undefined> {
  const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["RedrivePolicy"] }));
  const arn = Attributes?.RedrivePolicy ? (JSON.parse(Attributes.RedrivePolicy) as { deadLetterTargetArn?: string }).deadLetterTargetArn : undefined;
  // arn:aws:sqs:<region>:<account>:<name>
  const [, , , , account, name] = arn?.split(":") ?? [];
  if (!name) return undefined;
  const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: name, ...(account && { QueueOwnerAWSAccountId: account }) }));
  return QueueUrl;
}
