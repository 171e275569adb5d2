/**
 * A provider's Retry-After holds a stage's next attempt back (retry-policy.ts): the pass reports it, and each way a
 * job comes again waits at least that long: the SQS stage function and the Node host's consumer in the message's
 * visibility, inline dispatch in its background timer.
 */
import { ChangeMessageVisibilityCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { backends } from "../../test/support/databases";
import { quietLog, startEnrichmentHarness, testProviders } from "../../test/support/enrichment-harness";
import { startSqsConsumer } from "../dispatch/sqs-consumer";
import { ProviderError } from "../providers/provider-port";
import { runStageMessage, stageHandler } from "../runtime/jobs/stage-handler";
import { createInlineDispatcher } from "./inline-dispatcher";
import { maxProviderRetryAfterMs, retryDelayMs } from "./retry-policy";
import type { Retry } from "./run-pass";
import { createWorker, type Worker } from "./worker";

const job = { appId: "alpha", postId: "3kabcdefghijk" };
const throttled = (retryAfterMs: number): Retry => ({ kind: "retry", retryAfterMs });

describe("a provider's Retry-After", () => {
  it("the wait before the next attempt is the policy's or the provider's, whichever is longer, the provider's capped at five minutes", () => {
    expect(retryDelayMs(1)).toBe(5_000);
    expect(retryDelayMs(1, throttled(40_000))).toBe(40_000);
    expect(retryDelayMs(2, throttled(3_000))).toBe(20_000);
    expect(retryDelayMs(1, throttled(3_600_000))).toBe(maxProviderRetryAfterMs);
    expect(maxProviderRetryAfterMs).toBe(300_000);
  });

  it("a pass whose provider refused with Retry-After reports the wait, and leaves the stage pending", async () => {
    const providers = testProviders({ fail: { waveform: () => new ProviderError("retry", "throttled", "provider_error", { retryAfterMs: 40_000 }) } });
    const h = await startEnrichmentHarness(backends[0]!, { registry: providers.registry });
    try {
      const post = await h.createAudioPost({ waveform: true });
      const ports = { worker: createWorker(h.pass), logger: quietLog, now: () => new Date() };
      expect(await runStageMessage(ports, JSON.stringify({ appId: post.appId, postId: post.postId }), 1)).toEqual(throttled(40_000));
      expect((await h.stages(post.postId)).waveform!.status).toBe("pending");
    } finally {
      await h.close();
    }
  });

  it("the SQS stage function sets the message's visibility to the provider's wait when it is the longer", async () => {
    const visibility: unknown[] = [];
    const sqs = { send: async (command: ChangeMessageVisibilityCommand) => void visibility.push(command.input.VisibilityTimeout) } as unknown as SQSClient;
    let next: Retry = throttled(40_000);
    const worker: Worker = { runJob: async () => next };
    const handler = stageHandler(async () => ({ worker, logger: quietLog, now: () => new Date(), sqs }));
    const record = (receiveCount: number) =>
      ({ Records: [{ messageId: "m", receiptHandle: "r", body: JSON.stringify(job), attributes: { ApproximateReceiveCount: String(receiveCount) }, eventSourceARN: "arn:aws:sqs:eu-west-1:1:q" }] }) as unknown as SQSEvent;
    await expect(handler(record(1))).rejects.toThrow(/retried/);
    next = throttled(3_000);
    await expect(handler(record(2))).rejects.toThrow(/retried/);
    next = throttled(3_600_000);
    await expect(handler(record(1))).rejects.toThrow(/retried/);
    expect(visibility).toEqual([40, 20, 300]);
  });

  it("the Node host's consumer sets the message's visibility to the provider's wait when it is the longer", async () => {
    const visibility: unknown[] = [];
    let received = false;
    const client = {
      send: async (command: unknown) => {
        if (command instanceof ChangeMessageVisibilityCommand) visibility.push(command.input.VisibilityTimeout);
        if (!(command instanceof ReceiveMessageCommand)) return {};
        if (received) return new Promise((resolve) => setTimeout(() => resolve({ Messages: [] }), 10));
        received = true;
        return { Messages: [{ MessageId: "m", ReceiptHandle: "r", Body: JSON.stringify(job), Attributes: { ApproximateReceiveCount: "1" } }] };
      },
    } as unknown as SQSClient;
    const consumer = startSqsConsumer({ client, queueUrl: "q", log: quietLog, handle: async () => throttled(40_000) });
    await expect.poll(() => visibility, { timeout: 10_000 }).toEqual([40]);
    await consumer.stop();
  });

  it("inline dispatch tries again in the background no sooner than the provider's wait", async () => {
    const attempts: number[] = [];
    const worker: Worker = {
      runJob: async (_job, { attempt }) => {
        attempts.push(performance.now());
        return attempt === 1 ? throttled(300) : { kind: "done", ran: true };
      },
    };
    const work = new Set<Promise<unknown>>();
    const dispatcher = createInlineDispatcher(worker, (p) => work.add(p), { maxAttempts: 3, delayMs: () => 10 });
    await dispatcher.dispatch(job);
    await Promise.all(work);
    expect(attempts).toHaveLength(2);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(295);
  });
});
