import { randomBytes } from "node:crypto";
import { readdir, readFile, stat, utimes } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { createServer, type Server } from "node:http";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { buildApp } from "fauxqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawCid } from "../core/blobs/raw-cid";
import { routeList } from "../functions/routes";
import { audioFixture, ffmpegPath } from "./support/audio-fixtures";
import { startDataApiEmulator, type DataApiEmulator } from "./support/data-api-emulator";
import { startDidServer } from "./support/did-server";
import { startLambdaContainer, type LambdaContainer } from "./support/lambda-container";
import { multipartBody } from "./support/multipart-body";
import { startS3Emulator, type S3Emulator } from "./support/s3-emulator";
import { storedKeys } from "./support/stored-keys";
import { appName, sstBuild, type CfnValue, type Deployment } from "./support/sst-build";
import { startSsmStandIn, type SsmStandIn } from "./support/ssm-stand-in";
import { apiGatewayEvent } from "./support/test-service";

/**
 * The deployment as AWS would run it, offline: `sst build` bundles every function as it deploys them, and each
 * bundle runs in its own Node 22 process (the nodejs22.x runtime) with exactly the variables the template gives it,
 * its references resolved to loopback emulators: the Data API (over PGlite), S3 (s3rver), SQS (fauxqs), SSM for the
 * Config secrets. The database starts empty and is migrated by the migration step.
 */
const stage = "smoke";
const pdsHost = "pds.smoke.test";
const token = randomBytes(24).toString("hex");
const secrets = {
  SVC_APP_TOKENS: `alpha:${token}`,
  SVC_APP_WEBHOOK_SECRETS: `alpha:${randomBytes(24).toString("hex")}`,
  SVC_PLAYBACK_SIGNING_KEY: randomBytes(24).toString("hex"),
  SYSTEM_AUTH_TOKEN: randomBytes(24).toString("hex"),
};
const apiEndpoint = "https://smokeapi.execute-api.us-east-1.amazonaws.com";
const region = "us-east-1";

let deployment: Deployment;
let did: Awaited<ReturnType<typeof startDidServer>>;
let dataApi: DataApiEmulator;
let s3: S3Emulator;
let ssm: SsmStandIn;
let sqsApp: ReturnType<typeof buildApp>;
let sqsEndpoint: string;
let queues: { processing: string; deadLetters: string };
let sqs: SQSClient;
/** Webhook deliveries received, and the rendition function behind a loopback "function URL". */
const webhooks: { headers: Record<string, unknown>; body: any }[] = [];
let webhookServer: Server;
let renditionUrl: Server;
const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const readBody = (req: import("node:http").IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
  });
let renditionEndpoint: string;
const containers = new Map<string, LambdaContainer>();

const byType = (type: string) => Object.entries(deployment.resources).filter(([, r]) => r.Type === type);

beforeAll(async () => {
  did = await startDidServer();
  did.publish("alpha", pdsHost);
  webhookServer = createServer(async (req, res) => {
    webhooks.push({ headers: req.headers, body: JSON.parse((await readBody(req)).toString("utf8")) });
    res.writeHead(204).end();
  });
  const webhookEndpoint = await listen(webhookServer);
  // The function URL in front of the rendition function: each request becomes the payload 2.0 event Lambda sends.
  renditionUrl = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url ?? "/", "http://rendition.local");
    const event = apiGatewayEvent(req.method ?? "GET", url, url.pathname, {}, Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body.length ? body : undefined);
    const result = await (await container(onlyOfHandler("functions/rendition.handler"))).invoke<APIGatewayProxyStructuredResultV2>(event, 60_000);
    res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>).end(Buffer.from(result.body ?? "", result.isBase64Encoded ? "base64" : "utf8"));
  });
  renditionEndpoint = await listen(renditionUrl);
  deployment = await sstBuild(stage, {
    SVC_PDS_HOST: pdsHost,
    SVC_APP_DIDS: `alpha:${did.didOf("alpha")}`,
    SVC_APP_WEBHOOK_URLS: `alpha:${webhookEndpoint}/hooks`,
    // A rate limit the operator sets when deploying (the interface's is 60/1m); the deployed function must honour it.
    SVC_LIMIT_PLAYBACK_PER_IP: "3/30s",
  });
  [dataApi, s3, ssm] = await Promise.all([
    startDataApiEmulator(),
    startS3Emulator(),
    startSsmStandIn(
      Object.fromEntries(Object.entries(secrets).map(([name, value]) => [`/sst/${appName}/${stage}/Secret/${name}/value`, value])),
    ),
  ]);
  sqsApp = buildApp({ logger: false });
  await sqsApp.listen({ host: "127.0.0.1", port: 0 });
  sqsEndpoint = `http://127.0.0.1:${(sqsApp.server.address() as AddressInfo).port}`;
  sqs = new SQSClient({ region, endpoint: sqsEndpoint, credentials: { accessKeyId: "x", secretAccessKey: "y" } });
  const deadLetters = (await sqs.send(new CreateQueueCommand({ QueueName: "dead-letters" }))).QueueUrl!;
  const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: deadLetters, AttributeNames: ["QueueArn"] }))).Attributes!.QueueArn!;
  const processing = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: "processing",
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }) },
      }),
    )
  ).QueueUrl!;
  queues = { processing, deadLetters };
}, 240_000);

afterAll(async () => {
  await Promise.all([...containers.values()].map((c) => c.stop()));
  sqs?.destroy();
  webhookServer?.closeAllConnections();
  renditionUrl?.closeAllConnections();
  await Promise.all([
    dataApi?.stop(),
    s3?.stop(),
    ssm?.stop(),
    did?.close(),
    sqsApp?.close(),
    new Promise((resolve) => webhookServer?.close(resolve)),
    new Promise((resolve) => renditionUrl?.close(resolve)),
  ]);
});

/** Resolves the intrinsic functions the template's variables use, against the emulators. */
const resolve = (value: CfnValue): string => {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    if ("Ref" in value) return ref(value.Ref as string);
    if ("Fn::GetAtt" in value) {
      const [id, attribute] = value["Fn::GetAtt"] as [string, string];
      return getAtt(id, attribute);
    }
    if ("Fn::Join" in value) {
      const [separator, parts] = value["Fn::Join"] as [string, CfnValue[]];
      return parts.map(resolve).join(separator);
    }
  }
  throw new Error(`No emulator value for ${JSON.stringify(value)}`);
};

const ref = (id: string): string => {
  const pseudo: Record<string, string> = { "AWS::Region": region, "AWS::AccountId": "123456789012", "AWS::Partition": "aws", "AWS::URLSuffix": "amazonaws.com" };
  if (pseudo[id]) return pseudo[id];
  const type = deployment.resources[id]?.Type;
  if (type === "AWS::RDS::DBCluster") return "svc-smoke";
  if (type === "AWS::SecretsManager::SecretTargetAttachment" || type === "AWS::SecretsManager::Secret") return dataApi.secretArn;
  if (type === "AWS::S3::Bucket") return s3.bucket;
  if (type === "AWS::SQS::Queue") return deployment.resources[id]!.Properties.RedrivePolicy ? queues.processing : queues.deadLetters;
  throw new Error(`No emulator value for Ref ${id} (${type})`);
};

const getAtt = (id: string, attribute: string): string => {
  const type = deployment.resources[id]?.Type;
  if (type === "AWS::ApiGatewayV2::Api" && attribute === "ApiEndpoint") return apiEndpoint;
  if (type === "AWS::Lambda::Url" && attribute === "FunctionUrl") return `${renditionEndpoint}/`;
  throw new Error(`No emulator value for ${id}.${attribute} (${type})`);
};

/** The template's variables, resolved, plus what Lambda's runtime sets and the emulators' endpoints. */
const environmentOf = (logicalId: string): Record<string, string> => {
  const variables = (deployment.resources[logicalId]!.Properties.Environment?.Variables ?? {}) as Record<string, CfnValue>;
  return {
    ...Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, resolve(v)])),
    PATH: process.env.PATH ?? "",
    TZ: ":UTC",
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_SESSION_TOKEN: "smoke-session",
    AWS_LAMBDA_FUNCTION_NAME: logicalId,
    LAMBDA_TASK_ROOT: deployment.assetDir(logicalId),
    AWS_ENDPOINT_URL_RDS_DATA: dataApi.endpoint,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_SSM: ssm.endpoint,
    // s3rver predates flexible checksums.
    AWS_REQUEST_CHECKSUM_CALCULATION: "WHEN_REQUIRED",
    AWS_RESPONSE_CHECKSUM_VALIDATION: "WHEN_REQUIRED",
  };
};

const bundleOf = (logicalId: string) => {
  const handler = deployment.resources[logicalId]!.Properties.Handler as string;
  const dot = handler.lastIndexOf(".");
  return { bundle: path.join(deployment.assetDir(logicalId), `${handler.slice(0, dot)}.mjs`), exportName: handler.slice(dot + 1) };
};

const container = async (logicalId: string) => {
  let c = containers.get(logicalId);
  if (!c) {
    const env = environmentOf(logicalId);
    // The layer's ffmpeg (FFMPEG_PATH=/opt/bin/ffmpeg) is an arm64 binary; this x64 machine runs its own build.
    if (env.FFMPEG_PATH) env.FFMPEG_PATH = ffmpegPath;
    c = await startLambdaContainer({ ...bundleOf(logicalId), env });
    containers.set(logicalId, c);
  }
  return c;
};

const functionOfRoute = (routeKey: string): string => {
  const [, route] = byType("AWS::ApiGatewayV2::Route").find(([, r]) => r.Properties.RouteKey === routeKey)!;
  const integrationId = (route.Properties.Target["Fn::Join"][1] as { Ref?: string }[]).find((p) => p.Ref)!.Ref!;
  return deployment.resources[integrationId]!.Properties.IntegrationUri["Fn::GetAtt"][0] as string;
};

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  json: any;
}

/** One API Gateway request, routed as the HTTP API routes it, answered by the route's function. */
const request = async (
  method: string,
  url: string,
  opts: { routePath?: string; params?: Record<string, string>; headers?: Record<string, string>; body?: Buffer; auth?: boolean } = {},
): Promise<Answer> => {
  const target = new URL(url, apiEndpoint);
  const routeKey = opts.routePath ? `${method} ${opts.routePath}` : "$default";
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth) {
    headers.authorization = `Bearer ${token}`;
    headers["x-svc-acting-actor"] ??= "alice";
  }
  const event = apiGatewayEvent(method, target, opts.routePath ?? target.pathname, opts.params ?? {}, headers, opts.body);
  if (!opts.routePath) Object.assign(event, { routeKey: "$default" });
  const result = await (await container(functionOfRoute(routeKey))).invoke<APIGatewayProxyStructuredResultV2>(event);
  const body = Buffer.from(result.body ?? "", result.isBase64Encoded ? "base64" : "utf8");
  const responseHeaders = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    json = undefined;
  }
  return { status: result.statusCode ?? 200, headers: responseHeaders, body, json, ...({ raw: result } as object) };
};

describe("sst build", () => {
  it("writes the template with every function's code asset", async () => {
    const functions = byType("AWS::Lambda::Function");
    expect(functions.length).toBeGreaterThan(routeList.length);
    for (const [id, fn] of functions) {
      if (!String(fn.Properties.Handler).startsWith("functions/")) continue;
      expect((await stat(bundleOf(id).bundle)).isFile()).toBe(true);
    }
  });

  it("bundles no PGlite, node-postgres or file store into any function", async () => {
    for (const [id, fn] of byType("AWS::Lambda::Function")) {
      if (!String(fn.Properties.Handler).startsWith("functions/")) continue;
      const code = await readFile(bundleOf(id).bundle, "utf8");
      expect(code).not.toMatch(/@electric-sql\/pglite|pglite\.wasm|pg-protocol|createFsBlobStore/);
    }
  });
});

describe("deployed shape (Node 22, emulators)", () => {
  it("migrates a fresh database in the migration step, once", async () => {
    const migrate = await container(onlyOfHandler("functions/migrate.handler"));
    const first = await migrate.invoke<{ applied: string[] }>({ params: {} }, 900_000);
    expect(first.applied).toEqual((await import("../core/sql/bundled-migrations")).bundledMigrations.map((m) => m.name).sort());
    expect((await migrate.invoke<{ applied: string[] }>({ params: {} }, 900_000)).applied).toEqual([]);
    expect(migrate.node).toMatch(/^v22\./);
  });

  it("GET /health answers from the Data API and the bucket", async () => {
    const res = await request("GET", "/health", { routePath: "/health" });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ ok: true, backend: "rds-data", records: "empty", blobs: expect.stringMatching(/empty|present/) });
  });

  it("answers an unknown path with the envelope 404 (the catch-all route)", async () => {
    const res = await request("GET", "/nope");
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ success: false, error: { code: "NOT_FOUND" } });
  });

  let blob: { ref: { $link: string }; mimeType: string; size: number };
  let postId: string;

  it("uploads audio through API Gateway into the bucket", async () => {
    const clip = await audioFixture("audio/mpeg");
    const { body, contentType } = await multipartBody([{ name: "file", bytes: clip.bytes, type: "audio/mpeg" }]);
    const res = await request("POST", "/api/v1/audio/upload", { routePath: "/api/v1/audio/upload", headers: { "content-type": contentType }, body, auth: true });
    expect(res.status).toBe(201);
    blob = res.json.data.blob;
    expect(blob.size).toBe(clip.bytes.length);
  });

  it("creates a post with that audio, proving the tenant's custody from its did:web document", async () => {
    const body = Buffer.from(JSON.stringify({ text: "from the deployed shape", embed: { $type: "dev.svc.embed.audio", audio: blob } }));
    const res = await request("POST", "/api/v1/posts", { routePath: "/api/v1/posts", headers: { "content-type": "application/json" }, body, auth: true });
    expect(res.status).toBe(201);
    postId = res.json.data.postId;
  });

  it("GET /health then reports the post and the blob present", async () => {
    const res = await request("GET", "/health", { routePath: "/health" });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ ok: true, backend: "rds-data", records: "present", blobs: "present" });
  });

  it("reads the post back with a signed playback URL, which answers 302 to a presigned GET of the bucket", async () => {
    const res = await request("GET", `/api/v1/posts/${postId}`, { routePath: "/api/v1/posts/{postId}", params: { postId }, auth: true });
    expect(res.status).toBe(200);
    const playback = new URL(res.json.data.embed.url);
    expect(playback.origin).toBe(apiEndpoint);
    const play = await request("GET", playback.pathname + playback.search, { routePath: "/api/v1/audio" });
    expect(play.status).toBe(302);
    const location = new URL(play.headers.location!);
    expect(location.origin).toBe(s3.endpoint);
    expect(location.searchParams.get("X-Amz-Signature")).toBeTruthy();
    const audio = await fetch(location);
    expect(audio.status).toBe(200);
    expect(Buffer.from(await audio.arrayBuffer()).length).toBe(blob.size);
  });

  it("PATCH requests a stage; the queue carries the job to the stage function, which runs it and sends the webhook", async () => {
    const body = Buffer.from(JSON.stringify({ processing: { waveform: true } }));
    const patched = await request("PATCH", `/api/v1/posts/${postId}`, {
      routePath: "/api/v1/posts/{postId}",
      params: { postId },
      headers: { "content-type": "application/json" },
      body,
      auth: true,
    });
    expect(patched.status, `${patched.body}\n${containers.get(functionOfRoute("PATCH /api/v1/posts/{postId}"))?.logs()}`).toBe(202);
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queues.processing, MaxNumberOfMessages: 1, WaitTimeSeconds: 5, AttributeNames: ["All"] }));
    expect(Messages).toHaveLength(1);
    const [message] = Messages;
    const stageFn = await container(onlyOfHandler("functions/process-queue.handler"));
    const processingArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queues.processing, AttributeNames: ["QueueArn"] }))).Attributes!.QueueArn!;
    await stageFn.invoke(
      {
        Records: [
          {
            messageId: message!.MessageId,
            receiptHandle: message!.ReceiptHandle,
            body: message!.Body,
            attributes: { ApproximateReceiveCount: "1", SentTimestamp: String(Date.now()), SenderId: "smoke", ApproximateFirstReceiveTimestamp: String(Date.now()) },
            messageAttributes: {},
            md5OfBody: message!.MD5OfBody,
            eventSource: "aws:sqs",
            eventSourceARN: processingArn,
            awsRegion: region,
          },
        ],
      },
      900_000,
    );
    await expect.poll(() => webhooks.length, { timeout: 5_000 }).toBeGreaterThan(0);
    expect(webhooks.map((w) => w.body)).toEqual([expect.objectContaining({ postId, originAppId: "alpha", stage: "waveform", status: "ready" })]);
    expect(webhooks[0]!.headers["webhook-signature"]).toMatch(/^v1,/);
    const read = await request("GET", `/api/v1/posts/${postId}`, { routePath: "/api/v1/posts/{postId}", params: { postId }, auth: true });
    expect(JSON.stringify(read.json.data)).toContain('"waveform"');
  });

  it("serves the reference page's script from the deployment, gzip-encoded well under Lambda's 6 MB", async () => {
    const res = await request("GET", "/api/reference/standalone.js", {
      routePath: "/api/reference/standalone.js",
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(res.body.toString("base64").length).toBeLessThan(3 * 1024 * 1024);
    expect(gunzipSync(res.body).length).toBeGreaterThan(1_000_000);
  });

  it("starts every route's function with exactly the variables the template gives it: none answers a configuration 500", async () => {
    for (const route of routeList) {
      const params = Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name!, "3kabcdefghijk"]));
      const url = route.path.replace(/\{(\w+)\}/g, "3kabcdefghijk");
      const res = await request(route.method, url, { routePath: route.path, params });
      const logs = containers.get(functionOfRoute(`${route.method} ${route.path}`))?.logs() ?? "";
      expect(res.status, `${route.method} ${route.path}: ${res.body}\n${logs}`).toBeLessThan(500);
      expect(logs).not.toMatch(/ConfigError|is required/);
    }
  });

  it("honours a rate limit set when deploying: playback per IP at 3 per 30 s shows in RateLimit-Policy, and the fourth play is 429 naming it", async () => {
    const play = () => request("GET", "/api/v1/audio", { routePath: "/api/v1/audio", headers: { "x-forwarded-for": "198.51.100.60" } });
    for (let i = 0; i < 3; i++) {
      const res = await play();
      expect(res.status).toBe(400);
      expect(res.headers["ratelimit-policy"]).toBe('"ip";q=3;w=30, "aggregate-ip";q=600;w=60');
    }
    const refused = await play();
    expect(refused.status).toBe(429);
    expect((refused.json as { error: { message: string } }).error.message).toContain('3 reads per 30 s per client IP (RateLimit-Policy "ip")');
  });

  it("starts the sweep and the dead-letter consumer with the variables the template gives them", async () => {
    await (await container(onlyOfHandler("functions/sweep.handler"))).invoke({}, 60_000);
    const deadLetter = await container(onlyOfHandler("functions/dead-letter.handler"));
    const record = { messageId: "m", receiptHandle: "r", body: "not a job", attributes: { ApproximateReceiveCount: "3" }, messageAttributes: {}, eventSource: "aws:sqs", eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:dead-letters", awsRegion: region };
    await deadLetter.invoke({ Records: [record] }, 60_000);
    expect(deadLetter.logs()).not.toMatch(/ConfigError|is required/);
  });

  it("the hourly store janitor removes an hour-old object no row references from the bucket, and keeps the uploaded audio", async () => {
    const orphan = randomBytes(64);
    const orphanKey = `blobs/alpha/${rawCid(orphan)}`;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: orphanKey, Body: orphan }));
    // Two hours pass for the bucket: every object's LastModified (s3rver's file mtime) moves back.
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const entry of await readdir(path.join(s3.directory, s3.bucket), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith("._S3rver_object")) await utimes(path.join(entry.parentPath, entry.name), twoHoursAgo, twoHoursAgo);
    }
    const janitor = await container(onlyOfHandler("functions/store-janitor.handler"));
    const swept = await janitor.invoke<{ orphansRemoved: number }>({}, 60_000);
    expect(swept.orphansRemoved, janitor.logs()).toBe(1);
    const left = await storedKeys(s3, "blobs/");
    expect(left).not.toContain(orphanKey);
    expect(left).toContain(`blobs/alpha/${blob.ref.$link}`);
  });

  it("the rendition function denoises with RNNoise: its WebAssembly ships beside the bundle", async () => {
    // After the janitor's test: the variant it stores is referenced by no row, so it would count among its debris.
    const res = await fetch(`${renditionEndpoint}/v1/denoise`, {
      method: "POST",
      headers: { Authorization: `Bearer ${secrets.SYSTEM_AUTH_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ appId: "alpha", cid: blob.ref.$link, mimeType: blob.mimeType }),
    });
    const answer = (await res.json()) as { success: boolean; data?: { cid?: string } };
    expect(res.status, JSON.stringify(answer)).toBe(200);
    expect(answer.success).toBe(true);
    expect(answer.data?.cid).toMatch(/^baf/);
  });

  it("imports every function's bundle on Node 22 within its cold start", async () => {
    for (const [id, fn] of byType("AWS::Lambda::Function")) {
      if (!String(fn.Properties.Handler).startsWith("functions/")) continue;
      const c = await container(id);
      expect(c.node).toMatch(/^v22\./);
    }
  });
});

const onlyOfHandler = (handler: string) => {
  const found = byType("AWS::Lambda::Function").filter(([, r]) => r.Properties.Handler === handler);
  if (found.length !== 1) throw new Error(`expected one function with handler ${handler}, found ${found.length}`);
  return found[0]![0];
};
