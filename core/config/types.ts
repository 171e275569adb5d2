import type { AwsEnvironment } from "./aws-environment";
import type { DatabaseConfig } from "../sql/database-config";
import type { LogLevel } from "../observability/logger";
import type { Tenant } from "../tenancy/tenant";
import type { ProcessingConfig } from "./processing-config";
import type { RenditionTarget } from "./rendition-target";
import type { RateLimitPolicies } from "../rate-limit/policies";

/** The deployment's configuration, parsed once from the environment (see parse-config.ts and docs/configuration.md). */
export type { DatabaseConfig } from "../sql/database-config";

export type BlobConfig = { kind: "fs"; dir: string } | { kind: "s3"; bucket: string };

export type { Tenant } from "../tenancy/tenant";

/** How long anything waits on a dependency (the variable table holds each default). */
export interface Timeouts {
  /** Opening a database connection (pg `connectionTimeoutMillis`, the Data API client's connection timeout). */
  dbConnectMs: number;
  /** One SQL statement (Postgres `statement_timeout` and a client-side read timeout; the Data API request timeout). */
  dbStatementMs: number;
  /** One whole request, answered 503 when passed (bounded further on Lambda by the invocation's remaining time). */
  requestDeadlineMs: number;
  /** A Node host connection that sends nothing (a stalled upload) is closed after this long. */
  idleMs: number;
  /** A Node host request body averaging less than this over a window is answered 408 and closed (0: no floor). */
  bodyMinBytesPerSecond: number;
  /** The window that average is taken over. */
  bodyRateWindowMs: number;
}

export type { LogLevel } from "../observability/logger";

export interface Config {
  nodeEnv: string;
  production: boolean;
  logLevel: LogLevel;
  /**
   * The five below are set when the function's scopes need them (variables.ts): always on the Node host, on a
   * Lambda only if its route or job reaches them. Read them with `configured(value, "VARIABLE")`.
   */
  database?: DatabaseConfig;
  blobs?: BlobConfig;
  /** Absolute http(s) base URL, no trailing slash. */
  publicBaseUrl?: string;
  /** Host (optionally host:port) that a tenant DID's custody service endpoint must point at. */
  pdsHost?: string;
  playbackSigningKey?: string;
  /** appId -> tenant, union of SVC_APP_TOKENS and SVC_APP_DIDS (valid entries only). */
  tenants: ReadonlyMap<string, Tenant>;
  systemAuthToken?: string;
  /** SVC_RENDITION_SERVICE_URL with the bearer token to send it; absent when not configured (see rendition-target.ts). */
  rendition?: RenditionTarget;
  trustedProxyHops: number;
  /** The Node host's sweep of its blob store for debris (core/audio/store-janitor.ts). */
  storeJanitor: { intervalMs: number; stagingMaxAgeMs: number; orphanMinAgeMs: number };
  /** `forwarded` reads X-Forwarded-For; `edge` uses the address the edge saw (API Gateway sourceIp, socket address). */
  clientIpSource: "forwarded" | "edge";
  /** Every rate limit, the interface's unless the operator set it (SVC_LIMIT_*; docs/decisions.md#rate-limits). */
  rateLimits: RateLimitPolicies;
  /** Where the Node host listens (HOST, PORT). */
  listen: { host: string; port: number };
  /** The AWS region, credentials and endpoint overrides, for the calls a function signs itself. */
  aws: AwsEnvironment;
  /** LAMBDA_TASK_ROOT: where Lambda unpacked the function; absent off Lambda. */
  lambdaTaskRoot?: string;
  /** FFMPEG_PATH, for stages that run ffmpeg in the worker; unset, the static build (rendition/ffmpeg-path.ts). */
  ffmpegPath?: string;
  /** Build identity for /health. */
  sha: string | null;
  deployedAt: string | null;
  /** Enrichment: providers, dispatch and webhooks. */
  processing: ProcessingConfig;
  timeouts: Timeouts;
}
