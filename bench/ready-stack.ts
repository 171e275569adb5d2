/**
 * What the time-to-ready benchmark runs against, as a deployment runs it on one machine: fauxqs as the processing
 * queue (with its dead-letter queue after 3 receives), `npm run rendition`'s process, and `npm start`'s process
 * dispatching to the queue and consuming it, sharing one blob directory; a tenant webhook endpoint here. Every JSON
 * log line both processes write is kept (with its time), since the logs say where a post's time went.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { nodeServerOnFreePort } from "../test/support/node-server-process";
import { startSqsEmulator } from "../test/support/sqs-emulator";
import { startWebhookReceiver } from "../test/support/webhook-receiver";
import { request as httpRequest } from "./http-request";

const root = path.resolve(import.meta.dirname, "..");

/** One JSON log line, with `at` its timestamp in epoch ms. */
export interface LogLine {
  message: string;
  at: number;
  [field: string]: unknown;
}

export const readyToken = `ready-token-${randomBytes(16).toString("hex")}`;
const systemToken = randomBytes(32).toString("hex");
const webhookSecret = `whsec-${randomBytes(24).toString("hex")}`;

/**
 * One request on a connection of its own: the benchmark idles between rounds (making clips) for longer than the
 * server keeps a connection alive, and a reused connection the server just closed would fail the request.
 */
export const request = (options: Omit<Parameters<typeof httpRequest>[0], "agent">) => httpRequest({ ...options, agent: false });

/** Keeps each JSON line of a process's stdout; resolves `ready` on the first line `isReady` accepts. */
const collect = (child: ChildProcess, lines: LogLine[], isReady: (line: LogLine) => boolean) =>
  new Promise<LogLine>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`a benchmarked process exited with ${code} before it was ready`)));
    createInterface({ input: child.stdout! }).on("line", (text) => {
      let line: LogLine;
      try {
        const parsed = JSON.parse(text) as { message?: unknown; timestamp?: string };
        line = { ...parsed, message: String(parsed.message), at: Date.parse(parsed.timestamp ?? "") };
      } catch {
        return; // not a log line
      }
      lines.push(line);
      if (isReady(line)) resolve(line);
    });
  });

/** A fresh database: Postgres when TEST_DATABASE_URL is set (BENCH_BACKEND=pglite forces PGlite), else PGlite. */
async function freshDatabase(dir: string): Promise<{ url: string; kind: string; drop(): Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin || process.env.BENCH_BACKEND === "pglite") return { url: `pglite://${path.join(dir, "pg")}`, kind: "PGlite", drop: async () => {} };
  const name = `svc_ready_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    kind: "Postgres",
    async drop() {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export async function startReadyStack() {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-ready-"));
  const blobDir = path.join(dir, "blobs");
  const database = await freshDatabase(dir);
  const sqs = await startSqsEmulator({ visibilityTimeout: 900 });
  const hooks = await startWebhookReceiver();
  const children: ChildProcess[] = [];
  // Never leave a process behind, whatever ends this one.
  process.once("exit", () => children.forEach((child) => child.kill("SIGKILL")));
  const common = { PATH: process.env.PATH, HOME: process.env.HOME, SVC_BLOB_DIR: blobDir, SYSTEM_AUTH_TOKEN: systemToken, LOG_LEVEL: "info" };

  const renditionLines: LogLine[] = [];
  const rendition = spawn(process.execPath, ["--import", "tsx", "core/rendition/rendition-main.ts"], {
    cwd: root,
    env: { ...common, NODE_ENV: "production", HOST: "127.0.0.1", RENDITION_PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(rendition);
  const listening = await collect(rendition, renditionLines, (line) => line.message === "rendition service listening");

  const serviceLines: LogLine[] = [];
  const { port, start } = await nodeServerOnFreePort();
  const host = `localhost:${port}`;
  const service = start(
    {
      ...common,
      NODE_ENV: "development", // the host serves the tenant's did.json itself
      DATABASE_URL: database.url,
      SVC_PUBLIC_BASE_URL: `http://${host}`,
      SVC_PDS_HOST: host,
      SVC_PLAYBACK_SIGNING_KEY: randomBytes(32).toString("hex"),
      SVC_APP_TOKENS: `bench:${readyToken}`,
      SVC_APP_DIDS: `bench:did:web:${encodeURIComponent(host)}`,
      SVC_APP_WEBHOOK_URLS: `bench:${hooks.url}`,
      SVC_APP_WEBHOOK_SECRETS: `bench:${webhookSecret}`,
      TRUSTED_PROXY_HOPS: "1",
      // Empty counts as unset: local.env's inline dispatch and stub providers stay off.
      SVC_PROCESSING_INLINE: "",
      SVC_PROCESSING_STUB: "",
      SVC_RENDITION_SERVICE_URL: String(listening.url),
      PROCESSING_QUEUE_URL: sqs.queueUrl,
      PROCESSING_DEAD_LETTER_QUEUE_URL: sqs.deadLetterQueueUrl,
      AWS_REGION: "us-east-1",
      // The queue's own host, so the SDK's endpoint and the queue URL agree.
      AWS_ENDPOINT_URL_SQS: new URL(sqs.queueUrl).origin,
      AWS_ACCESS_KEY_ID: "bench",
      AWS_SECRET_ACCESS_KEY: "bench",
    },
    // fauxqs names its queues under sqs.<region>.localhost, which this machine's resolver does not know.
    { root, stderr: "inherit", nodeArgs: ["--import", path.join(root, "test/support/localhost-resolver.mjs")] },
  );
  children.push(service);
  await collect(service, serviceLines, (line) => line.message === "listening");
  // Healthy, and the tenant's custody proven by its first request rather than by a timed post.
  while ((await request({ port, method: "GET", path: "/health" }).then((r) => r.status, () => 0)) !== 200);

  const stop = async (child: ChildProcess) => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    await exited;
  };
  return {
    port,
    backend: database.kind,
    hooks,
    sqs,
    serviceLines,
    renditionLines,
    /**
     * CPU the rendition service has used so far, in ms: its own and its finished ffmpeg runs' (stat(5) utime, stime,
     * cutime, cstime). On a machine shared with other work the wall clock moves with the neighbours; this does not.
     */
    async renditionCpuMs() {
      const stat = await readFile(`/proc/${rendition.pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Fields 14 to 17 of stat(5), counted from the state (field 3), in clock ticks of 10 ms.
      return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks) * 10, 0);
    },
    async close() {
      await stop(service);
      await stop(rendition);
      await hooks.close();
      await sqs.close();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type ReadyStack = Awaited<ReturnType<typeof startReadyStack>>;
