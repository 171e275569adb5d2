import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { parseConfig } from "../../core/config/parse-config";
import type { BlobStore } from "../../core/blobs/blob-store";
import type { Deps } from "../../core/deps";
import { createLogger, type Logger } from "../../core/observability/logger";
import type { SqlBackend } from "../../core/sql/port";
import { lambdaHandler, type ApiGatewayHandler } from "../../core/runtime/lambda/lambda-handler";
import { loadRouteImpls } from "../../core/runtime/node/load-routes";
import type { EnrichmentOverrides } from "../../core/runtime/enrichment/compose-enrichment";
import { createNodeDeps } from "../../core/runtime/node/node-deps";
import { createNodeHost } from "../../core/runtime/node/node-host";
import { createRouteMatcher } from "../../core/runtime/node/route-matcher";
import { startDidServer } from "./did-server";

export type DriverName = "node" | "lambda";

export interface CallOptions {
  token?: string | null;
  actor?: string;
  actorDid?: string;
  headers?: Record<string, string>;
  json?: unknown;
  body?: Buffer | string;
  /** Client address, sent as X-Forwarded-For (the test service trusts one proxy hop). */
  ip?: string;
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export const PDS_HOST = "pds.test";

export interface TestTenant {
  appId: string;
  token: string;
  did: string;
}

/**
 * The whole service over one driver: `node` serves real HTTP from the Node host; `lambda` turns each call into an
 * API Gateway v2 event for the same handler modules. Tenants `alpha` and `beta` prove custody through a loopback
 * did:web server; `nodid` has a token but no DID.
 */
export const startTestService = async (opts: {
  driver: DriverName;
  sql: () => Promise<SqlBackend>;
  env?: Record<string, string>;
  now?: () => Date;
  /** Another blob store than the temp-dir file store (the S3 emulator). */
  blobs?: BlobStore;
  /** Enrichment ports to use instead of the configured ones (test providers, an SQS client on an emulator). */
  enrichment?: EnrichmentOverrides;
  /** Where the service logs (a recorder, to assert on log lines); the environment's LOG_LEVEL otherwise. */
  logger?: Logger;
  /** Last word on the environment, once the base URL is known. */
  configure?: (env: Record<string, string>, baseUrl: string) => void;
}) => {
  const dids = await startDidServer();
  const tenant = (appId: string): TestTenant => ({ appId, token: `tok-${appId}-${randomBytes(20).toString("hex")}`, did: dids.didOf(appId) });
  const tenants = { alpha: tenant("alpha"), beta: tenant("beta") };
  for (const t of Object.values(tenants)) dids.publish(t.appId, PDS_HOST);
  const nodid = tenant("nodid");
  const blobDir = await mkdtemp(path.join(tmpdir(), "svc-blobs-"));
  // The address is taken now and kept: the base URL is configuration, and a port merely probed free could be taken
  // by another suite's server before this one listens (EADDRINUSE).
  const listener = await listenOnFreePort();
  const baseUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const env: Record<string, string> = {
    NODE_ENV: "test",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    DATABASE_URL: "pglite://memory",
    SVC_BLOB_DIR: blobDir,
    SVC_PUBLIC_BASE_URL: baseUrl,
    SVC_PDS_HOST: PDS_HOST,
    SVC_PLAYBACK_SIGNING_KEY: "test-playback-signing-key-0123456789abcdef",
    SVC_APP_TOKENS: [...Object.values(tenants), nodid].map((t) => `${t.appId}:${t.token}`).join(","),
    SVC_APP_DIDS: Object.values(tenants).map((t) => `${t.appId}:${t.did}`).join(","),
    SYSTEM_AUTH_TOKEN: "test-system-token-0123456789abcdef0123",
    TRUSTED_PROXY_HOPS: "1",
    ...opts.env,
  };
  opts.configure?.(env, baseUrl);
  const logger = opts.logger ?? createLogger((env.LOG_LEVEL as "silent") ?? "silent");
  const config = parseConfig(env, logger);
  const sql = await opts.sql();
  const deps = await createNodeDeps(config, logger, { sql, now: opts.now, blobs: opts.blobs, enrichment: opts.enrichment });
  const impls = await loadRouteImpls();

  let server: Server | undefined;
  let send: (method: string, path: string, headers: Record<string, string>, body?: Buffer) => Promise<CallResult>;
  if (opts.driver === "node") {
    server = createNodeHost(impls, deps);
    // The host takes over the listening socket (a handle passed to listen), so the address never goes free.
    await new Promise<void>((resolve) => server!.listen(listener, resolve));
    send = async (method, path, headers, body) => {
      const res = await fetch(baseUrl + path, { method, headers, body: body ? new Uint8Array(body) : undefined, redirect: "manual" });
      return result(res.status, Object.fromEntries(res.headers), Buffer.from(await res.arrayBuffer()));
    };
  } else {
    // Events need no socket: the base URL only names the service.
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    const match = createRouteMatcher(impls.map((i) => i.route));
    const handlers = new Map<unknown, ApiGatewayHandler>(impls.map((impl) => [impl.route, lambdaHandler(impl, async () => deps)]));
    send = async (method, rawPath, headers, body) => {
      const url = new URL(rawPath, baseUrl);
      const found = match(method, url.pathname);
      if (!found) return result(404, {}, Buffer.from(JSON.stringify({ success: false, error: { code: "NOT_FOUND", message: "no such route" } })));
      const out = await handlers.get(found.route)!(apiGatewayEvent(method, url, found.route.path, found.params, headers, body));
      const bytes = out.body === undefined ? Buffer.alloc(0) : Buffer.from(out.body, out.isBase64Encoded ? "base64" : "utf8");
      const outHeaders = Object.fromEntries(Object.entries(out.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
      return result(out.statusCode ?? 200, outHeaders, bytes);
    };
  }

  const call = (method: string, path: string, options: CallOptions = {}): Promise<CallResult> => {
    const headers: Record<string, string> = { "x-forwarded-for": options.ip ?? randomIp() };
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? tenants.alpha.token}`;
    if (options.actor !== undefined) headers["x-svc-acting-actor"] = options.actor;
    if (options.actorDid !== undefined) headers["x-svc-acting-actor-did"] = options.actorDid;
    let body: Buffer | undefined;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = Buffer.from(JSON.stringify(options.json));
    } else if (options.body !== undefined) {
      body = Buffer.from(options.body);
    }
    Object.assign(headers, options.headers);
    return send(method, path, headers, body);
  };

  return {
    driver: opts.driver,
    baseUrl,
    deps: deps as Deps & { sql: SqlBackend },
    tenants,
    nodid,
    dids,
    blobDir,
    call,
    get: (path: string, options?: CallOptions) => call("GET", path, options),
    post: (path: string, options?: CallOptions) => call("POST", path, options),
    async close() {
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      await dids.close();
      await deps.enrichment.drain();
      await sql.close();
      await rm(blobDir, { recursive: true, force: true });
    },
  };
};

export type TestService = Awaited<ReturnType<typeof startTestService>>;

const result = (status: number, headers: Record<string, string>, body: Buffer): CallResult => {
  let json: unknown;
  if ((headers["content-type"] ?? "").includes("json") && body.length) json = JSON.parse(body.toString("utf8"));
  return { status, headers, body, json };
};

const randomIp = () => `10.${randomBytes(3).join(".")}`;

const listenOnFreePort = async (): Promise<Server> => {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  return listener;
};

/** An API Gateway HTTP API (payload format 2.0) event, as the gateway builds it: binary bodies base64-encoded. */
export const apiGatewayEvent = (
  method: string,
  url: URL,
  routePath: string,
  pathParameters: Record<string, string>,
  headers: Record<string, string>,
  body?: Buffer,
): APIGatewayProxyEventV2 => {
  const text = /json|text/.test(headers["content-type"] ?? "");
  const forwarded = headers["x-forwarded-for"];
  return {
    version: "2.0",
    routeKey: `${method} ${routePath}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    queryStringParameters: url.search ? Object.fromEntries(url.searchParams) : undefined,
    pathParameters: Object.keys(pathParameters).length ? pathParameters : undefined,
    requestContext: {
      accountId: "123456789012",
      apiId: "test",
      domainName: url.host,
      domainPrefix: "test",
      http: { method, path: url.pathname, protocol: "HTTP/1.1", sourceIp: forwarded?.split(",").pop()?.trim() ?? "127.0.0.1", userAgent: "test" },
      requestId: randomBytes(8).toString("hex"),
      routeKey: `${method} ${routePath}`,
      stage: "$default",
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: body === undefined ? undefined : text ? body.toString("utf8") : body.toString("base64"),
    isBase64Encoded: body !== undefined && !text,
  };
};
