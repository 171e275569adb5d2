import { PurgeQueueCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createSqsClient } from "../core/dispatch/sqs-client";
import { retryDelaySeconds } from "../core/processing/retry-policy";
import type { Job } from "../core/processing/job";
import { sweep } from "../core/processing/sweep";
import type { Stage } from "../core/providers/provider-port";
import { startEnrichmentWorkers } from "../core/runtime/node/enrichment-workers";
import { deadLetterHandler } from "../core/runtime/jobs/settle-jobs";
import { stageAnswerMarginMs, stageHandler } from "../core/runtime/jobs/stage-handler";
import { backends, migratedDatabase } from "./support/databases";
import { testProviders } from "./support/enrichment-harness";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { startSqsEmulator } from "./support/sqs-emulator";
import { startTestService, type TestService } from "./support/test-service";

const allStages = { denoise: true, trim: true, transcribe: true, waveform: true };

/** SQS dispatch end to end on loopback fauxqs: the Node host sends and consumes, the queue redrives after 3 receives. */
describe.each(backends)("SQS dispatch on $name", (backend) => {
  let sqs: Awaited<ReturnType<typeof startSqsEmulator>>;
  let svc: TestService;
  let workers: ReturnType<typeof startEnrichmentWorkers>;
  const receives: number[] = [];
  beforeAll(async () => {
    sqs = await startSqsEmulator({ visibilityTimeout: 30 });
    // Record the batch size every receive asks for.
    const send = sqs.client.send.bind(sqs.client) as SQSClient["send"];
    vi.spyOn(sqs.client, "send").mockImplementation(((command: unknown, ...rest: unknown[]) => {
      if (command instanceof ReceiveMessageCommand) receives.push(command.input.MaxNumberOfMessages ?? 1);
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as SQSClient["send"]);
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backend),
      env: { SVC_PROCESSING_STUB: "true", PROCESSING_QUEUE_URL: sqs.queueUrl, PROCESSING_DEAD_LETTER_QUEUE_URL: sqs.deadLetterQueueUrl },
      enrichment: { sqs: sqs.client },
    });
    // A failed attempt comes back at once here (the production backoff is seconds).
    workers = startEnrichmentWorkers(svc.deps, { sqs: sqs.client, waitSeconds: 1, retryVisibility: () => 0 });
  });
  afterAll(async () => {
    await workers?.stop();
    await svc?.close();
    await sqs?.close();
  });

  const create = async (actor: string, processing: Record<string, boolean>) => {
    const blob = await seedAudio(svc.deps, "alpha");
    const res = await svc.post("/api/v1/posts", { actor, json: audioPost(blob, processing) });
    expect(res.status).toBe(201);
    return res.json.data.postId as string;
  };
  // Read through SQL: polling through the API would spend the tenant's read limit.
  const processing = async (postId: string) =>
    Object.fromEntries(
      (await svc.deps.sql.query(`SELECT stage, status, reason FROM post_stages WHERE rkey = $1 ORDER BY array_position(ARRAY['denoise','trim','transcribe','waveform'], stage)`, [postId])).map((r) => [
        r.stage,
        { status: r.status, ...(r.reason ? { reason: r.reason } : {}) },
      ]),
    ) as Record<string, { status: string; reason?: string }>;
  const rows = (text: string, postId: string) => svc.deps.sql.query(text, [postId]);

  it("a create queues the job (its stages pending) and the consumer settles every stage, one message at a time", async () => {
    const postId = await create("sq-1", allStages);
    expect((await svc.get(`/api/v1/posts/${postId}`)).json.data.processing.transcribe.status).toMatch(/pending|ready/);
    await expect.poll(async () => Object.values(await processing(postId)).map((s) => s.status), { timeout: 15_000 }).toEqual([
      "ready",
      "ready",
      "ready",
      "ready",
    ]);
    expect(receives.length).toBeGreaterThan(0);
    expect(new Set(receives)).toEqual(new Set([1]));
  });

  it("a redelivered job creates no duplicate artifact and no duplicate event", async () => {
    const postId = await create("sq-2", { transcribe: true, waveform: true });
    const body = JSON.stringify({ appId: "alpha", postId });
    await sqs.client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrl, MessageBody: body }));
    await sqs.client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrl, MessageBody: body }));
    await expect.poll(async () => (await processing(postId)).waveform?.status, { timeout: 15_000 }).toBe("ready");
    await expect.poll(async () => (await processing(postId)).transcribe?.status, { timeout: 15_000 }).toBe("ready");
    // Every message handled: the queue has none left, visible or in flight.
    await expect.poll(() => sqs.messagesOn(sqs.queueUrl), { timeout: 15_000 }).toBe(0);
    expect(Number((await rows(`SELECT count(*) AS n FROM transcripts WHERE rkey = $1`, postId))[0]!.n)).toBe(1);
    expect(Number((await rows(`SELECT count(*) AS n FROM webhook_events WHERE rkey = $1`, postId))[0]!.n)).toBe(0);
    const generations = await rows(`SELECT stage, generation FROM post_stages WHERE rkey = $1 ORDER BY stage`, postId);
    expect(generations.map((r) => Number(r.generation))).toEqual([1, 1]);
  });
});

/**
 * A pass held open on a provider the test releases, on a queue whose visibility is 1 s; two consumers, as two
 * stage functions would. The consumers hold what they handle for a second at a time (a heartbeat), so the pass's
 * own message stays invisible however long the pass; a duplicate job sent meanwhile meets the live lease.
 */
describe.each(backends)("SQS dispatch on $name, a pass held open past the queue's receives", (backend) => {
  let sqs: Awaited<ReturnType<typeof startSqsEmulator>>;
  let svc: TestService;
  const workers: ReturnType<typeof startEnrichmentWorkers>[] = [];
  const gates: Partial<Record<Stage, Promise<void>>> = {};
  // denoise fails as a store that is down does (not a provider's answer): every attempt must be retried.
  const providers = testProviders({ gate: gates, changeBytes: false, fail: { denoise: () => new Error("connection refused") } });
  const sent: string[] = [];
  const received: { body: string; receiveCount: number }[] = [];
  beforeAll(async () => {
    sqs = await startSqsEmulator({ visibilityTimeout: 1 });
    const send = sqs.client.send.bind(sqs.client) as SQSClient["send"];
    vi.spyOn(sqs.client, "send").mockImplementation((async (command: unknown, ...rest: unknown[]) => {
      if (command instanceof SendMessageCommand) sent.push(command.input.MessageBody ?? "");
      const out = (await (send as (...a: unknown[]) => Promise<unknown>)(command, ...rest)) as { Messages?: { Body?: string; Attributes?: Record<string, string> }[] };
      if (command instanceof ReceiveMessageCommand && command.input.QueueUrl === sqs.queueUrl) {
        for (const m of out?.Messages ?? []) received.push({ body: m.Body ?? "", receiveCount: Number(m.Attributes?.ApproximateReceiveCount) });
      }
      return out;
    }) as SQSClient["send"]);
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backend),
      // No PROCESSING_DEAD_LETTER_QUEUE_URL: the host finds the dead-letter queue through the queue's redrive policy.
      env: { PROCESSING_QUEUE_URL: sqs.queueUrl, PROCESSING_CONCURRENCY: "1" },
      enrichment: { sqs: sqs.client, providers: providers.registry },
    });
    for (let i = 0; i < 2; i++) workers.push(startEnrichmentWorkers(svc.deps, { sqs: sqs.client, waitSeconds: 1, retryVisibility: () => 0, holdSeconds: 1 }));
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await svc?.close();
    await sqs?.close();
  });

  const create = async (actor: string, processing: Record<string, boolean>) => {
    const blob = await seedAudio(svc.deps, "alpha");
    const res = await svc.post("/api/v1/posts", { actor, json: audioPost(blob, processing) });
    expect(res.status).toBe(201);
    return res.json.data.postId as string;
  };
  const statuses = async (postId: string) =>
    Object.fromEntries((await svc.deps.sql.query(`SELECT stage, status, reason FROM post_stages WHERE rkey = $1`, [postId])).map((r) => [r.stage, `${r.status}${r.reason ? ` (${r.reason})` : ""}`]));

  it("a pass's message stays its own past the queue's visibility (the consumer holds it); a duplicate job that meets the pass's lease is retried, dead-lettered at last without touching the pass's stages, and the pass settles every stage ready", async () => {
    let release!: () => void;
    gates.transcribe = new Promise<void>((resolve) => (release = resolve));
    const postId = await create("held-1", { transcribe: true, waveform: true });
    const body = JSON.stringify({ appId: "alpha", postId });
    await expect.poll(() => providers.count("transcribe"), { timeout: 10_000 }).toBe(1);
    // Three times the queue's visibility later, the pass's message is still its own: received once.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(received.filter((r) => r.body === body)).toHaveLength(1);
    // A duplicate job (a sweep's, a retried request's) meets the lease and is handed back to be tried again, until
    // its third receive dead-letters it. The dead-letter consumer finds the live lease and leaves the stages to the
    // pass that holds it.
    await sqs.client.send(new SendMessageCommand({ QueueUrl: sqs.queueUrl, MessageBody: body }));
    await expect.poll(() => received.filter((r) => r.body === body).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(4);
    await expect.poll(() => sqs.messagesOn(sqs.deadLetterQueueUrl), { timeout: 15_000 }).toBe(0);
    expect(await statuses(postId)).toEqual({ transcribe: "pending", waveform: "pending" });
    expect(providers.count("transcribe")).toBe(1);
    release();
    await expect.poll(() => statuses(postId), { timeout: 15_000 }).toEqual({ transcribe: "ready", waveform: "ready" });
    // The pass's own message is deleted once it is done.
    await expect.poll(() => sqs.messagesOn(sqs.queueUrl), { timeout: 15_000 }).toBe(0);
  });

  it("a PATCH that names only stages already pending changes nothing and sends no job, while the pass holding them runs", async () => {
    let release!: () => void;
    gates.transcribe = new Promise<void>((resolve) => (release = resolve));
    const calls = providers.count("transcribe");
    const postId = await create("held-2", { transcribe: true, waveform: true });
    const body = JSON.stringify({ appId: "alpha", postId });
    await expect.poll(() => providers.count("transcribe"), { timeout: 10_000 }).toBe(calls + 1);
    const before = await svc.deps.sql.query(`SELECT stage, updated_at, generation FROM post_stages WHERE rkey = $1 ORDER BY stage`, [postId]);
    const patched = await svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "held-2", json: { processing: { transcribe: true, waveform: true } } });
    expect(patched.status).toBe(202);
    expect(patched.json.data.processing.transcribe.status).toBe("pending");
    expect(sent.filter((b) => b === body)).toHaveLength(1);
    expect(await svc.deps.sql.query(`SELECT stage, updated_at, generation FROM post_stages WHERE rkey = $1 ORDER BY stage`, [postId])).toEqual(before);
    release();
    await expect.poll(() => statuses(postId), { timeout: 15_000 }).toEqual({ transcribe: "ready", waveform: "ready" });
    expect(sent.filter((b) => b === body)).toHaveLength(1);
  });

  it("a job that cannot run is received 3 times, then dead-lettered, and the dead-letter consumer (of the queue the redrive policy names) settles it failed (dead_letter)", async () => {
    const postId = await create("held-3", { denoise: true });
    await expect.poll(() => statuses(postId), { timeout: 20_000, interval: 250 }).toEqual({ denoise: "failed (dead_letter)" });
  });
});

describe.each(backends)("a job that cannot be queued, on $name", (backend) => {
  let svc: TestService;
  const down = { send: async () => Promise.reject(new Error("the queue is unreachable")) } as unknown as SQSClient;
  beforeAll(async () => {
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backend),
      env: { SVC_PROCESSING_STUB: "true", PROCESSING_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/1/processing" },
      enrichment: { sqs: down },
    });
  });
  afterAll(() => svc?.close());

  it("is answered as accepted, a create (201) and a PATCH (202, the stage pending) alike, and leaves the post's stages to the next sweep, not to the 15-minute rule", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const created = await svc.post("/api/v1/posts", { actor: "nq-1", json: audioPost(blob, { waveform: true }) });
    expect(created.status).toBe(201);
    const bare = await svc.post("/api/v1/posts", { actor: "nq-1", json: audioPost(blob) });
    const patched = await svc.call("PATCH", `/api/v1/posts/${bare.json.data.postId}`, { actor: "nq-1", json: { processing: { transcribe: true } } });
    expect(patched.status).toBe(202);
    expect(patched.json.data.processing.transcribe).toMatchObject({ status: "pending" });
    const dispatched: Job[] = [];
    const quiet = { info() {}, warn() {}, error() {} };
    await sweep({ sql: svc.deps.sql, dispatcher: { mode: "sqs", dispatch: async (job) => void dispatched.push(job) }, webhooks: new Map(), retry: svc.deps.config.processing.webhookRetry, log: quiet }, new Date(Date.now() + 1000));
    expect(dispatched.map((j) => j.postId).sort()).toEqual([created.json.data.postId, bare.json.data.postId].sort());
  });
});

/**
 * A job that dead-letters while a newer job of the same post waits on the queue: the stage requested after the
 * dead-lettered job was sent belongs to the newer job, and only the stages pending when it was sent are failed.
 */
describe.each(backends)("a dead-lettered job and a newer one, on $name", (backend) => {
  let sqs: Awaited<ReturnType<typeof startSqsEmulator>>;
  let svc: TestService;
  beforeAll(async () => {
    sqs = await startSqsEmulator({ visibilityTimeout: 30 });
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backend),
      env: { SVC_PROCESSING_STUB: "true", PROCESSING_QUEUE_URL: sqs.queueUrl, PROCESSING_DEAD_LETTER_QUEUE_URL: sqs.deadLetterQueueUrl },
      enrichment: { sqs: sqs.client },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await sqs?.close();
  });
  const statuses = async (postId: string) =>
    Object.fromEntries((await svc.deps.sql.query(`SELECT stage, status, reason FROM post_stages WHERE rkey = $1`, [postId])).map((r) => [r.stage, `${r.status}${r.reason ? ` (${r.reason})` : ""}`]));
  const later = () => new Promise((resolve) => setTimeout(resolve, 5));
  /** Each test starts on an empty queue: the one message there is its own post's job. */
  beforeEach(() => sqs.client.send(new PurgeQueueCommand({ QueueUrl: sqs.queueUrl })));

  it("the dead-letter function fails only the stages pending when the dead-lettered job was sent (its SentTimestamp), and without one every pending stage, as before", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const created = await svc.post("/api/v1/posts", { actor: "dl-1", json: audioPost(blob, { transcribe: true }) });
    const postId = created.json.data.postId as string;
    const [job] = (await sqs.client.send(new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl, VisibilityTimeout: 0, MessageSystemAttributeNames: ["SentTimestamp"] }))).Messages ?? [];
    const sentAt = job!.Attributes!.SentTimestamp!;
    await later();
    // The client asks for the waveform: a newer job (its own) is queued.
    expect((await svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "dl-1", json: { processing: { waveform: true } } })).status).toBe(202);
    const handler = deadLetterHandler(async () => svc.deps);
    const record = (attributes: Record<string, string>) => ({ Records: [{ body: JSON.stringify({ appId: "alpha", postId }), attributes }] }) as unknown as SQSEvent;
    await handler(record({ ApproximateReceiveCount: "3", SentTimestamp: sentAt }));
    expect(await statuses(postId)).toEqual({ transcribe: "failed (dead_letter)", waveform: "pending" });
    await handler(record({ ApproximateReceiveCount: "3" }));
    expect(await statuses(postId)).toEqual({ transcribe: "failed (dead_letter)", waveform: "failed (dead_letter)" });
  });

  it("the Node host's dead-letter consumer asks the queue when the job was sent: a stage requested after it is left to its own job", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const created = await svc.post("/api/v1/posts", { actor: "dl-2", json: audioPost(blob, { transcribe: true }) });
    const postId = created.json.data.postId as string;
    // Its job is received three times and not handled; the next receive moves it to the dead-letter queue, as sent.
    for (let i = 0; i < 4; i++) await sqs.client.send(new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl, VisibilityTimeout: 0 }));
    expect(await sqs.messagesOn(sqs.deadLetterQueueUrl)).toBe(1);
    await later();
    expect((await svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: "dl-2", json: { processing: { waveform: true } } })).status).toBe(202);
    // Only the dead-letter consumer runs: the newer job waits on the processing queue.
    const processing = { ...svc.deps.config.processing, queueUrl: undefined };
    const workers = startEnrichmentWorkers({ ...svc.deps, config: { ...svc.deps.config, processing } }, { sqs: sqs.client, waitSeconds: 1 });
    try {
      await expect.poll(() => statuses(postId), { timeout: 10_000 }).not.toMatchObject({ transcribe: "pending" });
      expect(await statuses(postId)).toEqual({ transcribe: "failed (dead_letter)", waveform: "pending" });
    } finally {
      await workers.stop();
    }
  });
});

/** A queue endpoint that takes the connection and never answers: a stalled SendMessage. */
const silentQueue = async () => {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("data", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

describe.each(backends)("a queue that never answers, on $name", (backend) => {
  let queue: Awaited<ReturnType<typeof silentQueue>>;
  let svc: TestService;
  const deadlineMs = 9_000;
  beforeAll(async () => {
    queue = await silentQueue();
    svc = await startTestService({
      driver: "lambda",
      sql: () => migratedDatabase(backend),
      env: { SVC_PROCESSING_STUB: "true", PROCESSING_QUEUE_URL: `${queue.endpoint}/000000000000/processing`, SVC_REQUEST_DEADLINE_MS: String(deadlineMs) },
      enrichment: { sqs: createSqsClient("us-east-1", queue.endpoint) },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await queue?.close();
  });

  it("a create with processing is answered 201 well inside its deadline, the SQS call given up in bounded time, and its stage is left to the next sweep", async () => {
    const blob = await seedAudio(svc.deps, "alpha");
    const started = Date.now();
    const created = await svc.post("/api/v1/posts", { actor: "silent-1", json: audioPost(blob, { waveform: true }) });
    expect(created.status).toBe(201);
    expect(Date.now() - started).toBeLessThan(deadlineMs - 2_000);
    const dispatched: Job[] = [];
    const quiet = { info() {}, warn() {}, error() {} };
    await sweep({ sql: svc.deps.sql, dispatcher: { mode: "sqs", dispatch: async (job) => void dispatched.push(job) }, webhooks: new Map(), retry: svc.deps.config.processing.webhookRetry, log: quiet }, new Date(Date.now() + 1000));
    expect(dispatched).toEqual([{ appId: "alpha", postId: created.json.data.postId }]);
  }, 30_000);
});

describe("the SQS stage function (Lambda, batch of 1)", () => {
  it("a failed attempt's visibility backs off with each receive (5 s, 20 s, 80 s), far below the queue's timeout", () => {
    expect([1, 2, 3].map((attempt) => retryDelaySeconds(attempt))).toEqual([5, 20, 80]);
    expect(retryDelaySeconds(10)).toBe(900);
  });

  it("a pass stops short of the function's own time, so a job a slow provider holds up is still handed back before AWS kills the function", async () => {
    const sent: number[] = [];
    const started = Date.now();
    const sqs = { send: async () => void sent.push(Date.now() - started) } as unknown as SQSClient;
    const logger = { error() {}, warn() {}, info() {}, debug() {} };
    let deadline: number | undefined;
    // A pass whose provider never answers ends, as run-pass does, at its deadline: asked to retry.
    const worker = {
      runJob: async (_job: unknown, options: { deadline?: number }) => {
        deadline = options.deadline;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, options.deadline! - Date.now())));
        return { kind: "retry" as const };
      },
    };
    const handler = stageHandler(async () => ({ worker, logger, now: () => new Date(), sqs }));
    const lambdaMs = stageAnswerMarginMs + 1_500;
    const context = { getRemainingTimeInMillis: () => lambdaMs - (Date.now() - started) };
    const record = { messageId: "m-2", receiptHandle: "r-2", body: JSON.stringify({ appId: "alpha", postId: "3kabcdefghijk" }), attributes: { ApproximateReceiveCount: "1" }, eventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:svc-processing" };
    await expect(handler({ Records: [record] } as unknown as SQSEvent, context)).rejects.toThrow(/retried/);
    expect(deadline! - started).toBeLessThanOrEqual(lambdaMs - stageAnswerMarginMs + 50);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeLessThan(lambdaMs - stageAnswerMarginMs / 2);
  });

  it("a job to retry shortens the message's visibility on the queue it came from (its event source) and throws, so the event source returns it soon", async () => {
    const sent: unknown[] = [];
    const sqs = { send: async (command: unknown) => void sent.push(command) } as unknown as SQSClient;
    const logger = { error() {}, warn() {}, info() {}, debug() {} };
    // The worker's database is down, so the attempt fails and must be retried.
    const worker = { runJob: () => Promise.reject(new Error("connection refused")) };
    const handler = stageHandler(async () => ({ worker, logger, now: () => new Date(), sqs }));
    const event = (body: string, receiveCount: string): SQSEvent => ({
      Records: [
        {
          messageId: "m-1",
          receiptHandle: "r-1",
          body,
          attributes: { ApproximateReceiveCount: receiveCount, SentTimestamp: "0", SenderId: "x", ApproximateFirstReceiveTimestamp: "0" },
          messageAttributes: {},
          md5OfBody: "",
          eventSource: "aws:sqs",
          eventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:svc-processing",
          awsRegion: "eu-west-1",
        },
      ],
    });
    await expect(handler(event(JSON.stringify({ appId: "alpha", postId: "3kabcdefghijk" }), "2"))).rejects.toThrow(/retried/);
    expect(sent).toHaveLength(1);
    expect((sent[0] as { input: Record<string, unknown> }).input).toMatchObject({ QueueUrl: "https://sqs.eu-west-1.amazonaws.com/123456789012/svc-processing", ReceiptHandle: "r-1", VisibilityTimeout: 20 });
    // A body that is not a job can never succeed: it is dropped, not retried.
    await expect(handler(event("not json", "1"))).resolves.toBeUndefined();
  });
});

/** The Node host's consumer runs PROCESSING_CONCURRENCY jobs at once, so one slow provider holds one post, not all. */
describe.each(backends)("SQS dispatch on $name, PROCESSING_CONCURRENCY", (backend) => {
  let sqs: Awaited<ReturnType<typeof startSqsEmulator>>;
  let svc: TestService;
  let workers: ReturnType<typeof startEnrichmentWorkers>;
  let release!: () => void;
  const providers = testProviders({ gate: { waveform: new Promise<void>((resolve) => (release = resolve)) } });
  beforeAll(async () => {
    sqs = await startSqsEmulator({ visibilityTimeout: 30 });
    svc = await startTestService({
      driver: "node",
      sql: () => migratedDatabase(backend),
      env: { PROCESSING_QUEUE_URL: sqs.queueUrl, PROCESSING_CONCURRENCY: "3" },
      enrichment: { sqs: sqs.client, providers: providers.registry },
    });
    workers = startEnrichmentWorkers(svc.deps, { sqs: sqs.client, waitSeconds: 1 });
  });
  afterAll(async () => {
    release();
    await workers?.stop();
    await svc?.close();
    await sqs?.close();
  });

  it("runs PROCESSING_CONCURRENCY jobs at once: three posts held by one slow provider are all in it together, and all settle once it answers", async () => {
    const postIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const blob = await seedAudio(svc.deps, "alpha");
      const res = await svc.post("/api/v1/posts", { actor: `concurrent-${i}`, json: audioPost(blob, { waveform: true }) });
      expect(res.status).toBe(201);
      postIds.push(res.json.data.postId as string);
    }
    // Every pass waits inside the held provider at the same time: a single consumer would have one there.
    await expect.poll(() => providers.count("waveform"), { timeout: 10_000 }).toBe(3);
    release();
    const ready = async () => (await svc.deps.sql.query(`SELECT count(*)::int AS n FROM post_stages WHERE rkey = ANY(string_to_array($1, ',')) AND status = 'ready'`, [postIds.join(",")]))[0]!.n;
    await expect.poll(ready, { timeout: 10_000 }).toBe(3);
  });
});
