/**
 * The deployed shape under counting (docs/capacity.md): each function bundled as SST v2 bundles it, run in its own
 * Node 22 process as a Lambda execution environment, against the emulators (the Data API over PGlite, s3rver,
 * fauxqs) behind proxies that count every AWS request by action. One request of a kind is measured as what it cost:
 * Data API calls, S3 and SQS requests, Lambda invocations with their duration, and each environment's peak memory.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { ffmpegPath } from "./audio-fixtures";
import { startCountingProxy, type CountingProxy } from "./counting-proxy";
import { startDataApiEmulator, type DataApiEmulator } from "./data-api-emulator";
import { startDidServer } from "./did-server";
import { bundleFunction } from "./lambda-bundle";
import { startLambdaContainer, type LambdaContainer } from "./lambda-container";
import { startS3Emulator, type S3Emulator } from "./s3-emulator";
import { startSqsEmulator } from "./sqs-emulator";
import { apiGatewayEvent } from "./test-service";
import { startWebhookReceiver } from "./webhook-receiver";

export const capacityToken = randomBytes(24).toString("hex");
const apiBase = "https://capacityapi.execute-api.us-east-1.amazonaws.com";

/** What one measured request cost. */
export interface Cost {
  dataApi: Record<string, number>;
  s3: Record<string, number>;
  sqs: Record<string, number>;
  /** Lambda invocations: function name and its duration (ms, this machine). */
  invocations: { fn: string; ms: number }[];
}

export const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

export async function startCapacityHarness() {
  const dir = await mkdtemp(path.join(tmpdir(), "capacity-"));
  const did = await startDidServer();
  const pdsHost = "pds.capacity.test";
  did.publish("alpha", pdsHost);
  const hooks = await startWebhookReceiver();
  const [dataApi, s3, sqs]: [DataApiEmulator, S3Emulator, Awaited<ReturnType<typeof startSqsEmulator>>] = await Promise.all([
    startDataApiEmulator(),
    startS3Emulator(),
    startSqsEmulator({ visibilityTimeout: 900 }),
  ]);
  const sqsPort = new URL(sqs.endpoint).port;
  const proxies = {
    dataApi: await startCountingProxy("rds-data", dataApi.endpoint),
    s3: await startCountingProxy("s3", s3.endpoint),
  };
  // The queue URL the functions get names the proxy's port; the proxy puts fauxqs's back into each request.
  let sqsProxyPort = "";
  const sqsProxy: CountingProxy = await startCountingProxy("sqs", sqs.endpoint, (body) => body.replaceAll(`localhost:${sqsProxyPort}/`, `localhost:${sqsPort}/`));
  sqsProxyPort = new URL(sqsProxy.endpoint).port;
  const viaProxy = (queueUrl: string) => queueUrl.replace(`:${sqsPort}/`, `:${sqsProxyPort}/`);

  // The rendition function behind a loopback "function URL", as deployed-shape.test.ts runs it.
  let renditionUrl = "";
  const renditionServer: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://rendition.local");
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const event = apiGatewayEvent(req.method ?? "GET", url, url.pathname, {}, headers, Buffer.concat(chunks));
    const result = await invoke<APIGatewayProxyStructuredResultV2>("rendition", event, 120_000);
    res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>).end(result.body ?? "");
  });
  await new Promise<void>((resolve) => renditionServer.listen(0, "127.0.0.1", resolve));
  renditionUrl = `http://127.0.0.1:${(renditionServer.address() as AddressInfo).port}`;

  const systemToken = randomBytes(24).toString("hex");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    TZ: ":UTC",
    NODE_ENV: "production",
    LOG_LEVEL: "info",
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_ENDPOINT_URL_RDS_DATA: proxies.dataApi.endpoint,
    AWS_ENDPOINT_URL_S3: proxies.s3.endpoint,
    AWS_ENDPOINT_URL_SQS: `http://sqs.us-east-1.localhost:${sqsProxyPort}`,
    AWS_REQUEST_CHECKSUM_CALCULATION: "WHEN_REQUIRED",
    AWS_RESPONSE_CHECKSUM_VALIDATION: "WHEN_REQUIRED",
    DATABASE_URL: `rds-data://${dataApi.database}?resourceArn=${encodeURIComponent(dataApi.resourceArn)}&secretArn=${encodeURIComponent(dataApi.secretArn)}`,
    SVC_BLOB_BUCKET: s3.bucket,
    SVC_PUBLIC_BASE_URL: apiBase,
    SVC_PDS_HOST: pdsHost,
    SVC_PLAYBACK_SIGNING_KEY: randomBytes(24).toString("hex"),
    SVC_APP_TOKENS: `alpha:${capacityToken}`,
    SVC_APP_DIDS: `alpha:${did.didOf("alpha")}`,
    SVC_APP_WEBHOOK_URLS: `alpha:${hooks.url}`,
    SVC_APP_WEBHOOK_SECRETS: `alpha:${randomBytes(24).toString("hex")}`,
    SYSTEM_AUTH_TOKEN: systemToken,
    PROCESSING_QUEUE_URL: viaProxy(sqs.queueUrl),
    SVC_RENDITION_SERVICE_URL: renditionUrl,
    // The stub transcriber stands in for Amazon Transcribe (priced on paper); denoise is not requested (ElevenLabs').
    SVC_TRANSCRIBER: "stub",
    FFMPEG_PATH: ffmpegPath,
  };

  const containers = new Map<string, Promise<LambdaContainer>>();
  const container = (fn: string) => {
    let c = containers.get(fn);
    if (!c) {
      c = (async () => {
        const { bytes } = await bundleFunction(fn);
        const file = path.join(dir, `${fn}.mjs`);
        await writeFile(file, bytes);
        return startLambdaContainer({ bundle: file, exportName: "handler", env: { ...env, AWS_LAMBDA_FUNCTION_NAME: fn, LAMBDA_TASK_ROOT: dir } });
      })();
      containers.set(fn, c);
    }
    return c;
  };
  let invocations: Cost["invocations"] = [];
  async function invoke<T>(fn: string, event: unknown, timeoutMs = 30_000): Promise<T> {
    const c = await container(fn);
    const started = performance.now();
    try {
      return await c.invoke<T>(event, timeoutMs);
    } finally {
      invocations.push({ fn, ms: performance.now() - started });
    }
  }

  /** One API Gateway request to the function of `fn` (a route file). */
  const api = async (fn: string, method: string, routePath: string, url: string, opts: { params?: Record<string, string>; json?: unknown; actor?: string } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${capacityToken}`, "x-svc-acting-actor": opts.actor ?? "alice", "x-forwarded-for": `10.1.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}` };
    if (opts.json !== undefined) headers["content-type"] = "application/json";
    const body = opts.json === undefined ? undefined : Buffer.from(JSON.stringify(opts.json));
    const result = await invoke<APIGatewayProxyStructuredResultV2>(fn, apiGatewayEvent(method, new URL(url, apiBase), routePath, opts.params ?? {}, headers, body));
    const text = Buffer.from(result.body ?? "", result.isBase64Encoded ? "base64" : "utf8").toString("utf8");
    return { status: result.statusCode ?? 200, headers: result.headers ?? {}, json: text.startsWith("{") ? (JSON.parse(text) as any) : undefined, text };
  };

  /** Runs `work` and answers what it cost. */
  const measure = async (work: () => Promise<unknown>): Promise<Cost> => {
    proxies.dataApi.take();
    proxies.s3.take();
    sqsProxy.take();
    invocations = [];
    await work();
    const measured = invocations;
    invocations = [];
    return { dataApi: proxies.dataApi.take(), s3: proxies.s3.take(), sqs: sqsProxy.take(), invocations: measured };
  };

  /** The processing queue's next message, received as the Lambda event source does (not counted: AWS's poller). */
  const nextJob = async () => {
    const { Messages = [] } = await sqs.client.send(new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 5 }));
    const m = Messages[0];
    if (!m) throw new Error("no job on the processing queue");
    return {
      Records: [
        {
          messageId: m.MessageId,
          receiptHandle: m.ReceiptHandle,
          body: m.Body,
          attributes: { ApproximateReceiveCount: "1", SentTimestamp: String(Date.now()), SenderId: "capacity", ApproximateFirstReceiveTimestamp: String(Date.now()) },
          messageAttributes: {},
          md5OfBody: m.MD5OfBody,
          eventSource: "aws:sqs",
          eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:processing",
          awsRegion: "us-east-1",
        },
      ],
    };
  };

  /** Peak resident memory (MB) of each environment so far. */
  const peakMemoryMb = async () => {
    const peaks: Record<string, number> = {};
    for (const [fn, c] of containers) {
      const status = await readFile(`/proc/${(await c).pid}/status`, "utf8").catch(() => "");
      peaks[fn] = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
    }
    return peaks;
  };

  await invoke("migrate", { params: {} }, 300_000);
  return {
    api,
    invoke,
    measure,
    nextJob,
    peakMemoryMb,
    hooks,
    s3Endpoint: proxies.s3.endpoint,
    async close() {
      await Promise.all([...containers.values()].map(async (c) => (await c).stop()));
      renditionServer.closeAllConnections();
      await new Promise((resolve) => renditionServer.close(resolve));
      await Promise.all([proxies.dataApi.close(), proxies.s3.close(), sqsProxy.close()]);
      await Promise.all([dataApi.stop(), s3.stop(), sqs.close(), hooks.close(), did.close()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type CapacityHarness = Awaited<ReturnType<typeof startCapacityHarness>>;
