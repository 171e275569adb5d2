import {
  clientIpSource,
  concurrency,
  logLevel,
  milliseconds,
  modelName,
  nonNegativeInteger,
  parseDatabaseUrl,
  parsePdsHost,
  parsePublicBaseUrl,
  platformTranscriber,
  port,
  rateLimitPolicy,
  seconds,
  secret,
  type VariableParser,
} from "./variable-parsers";
import type { VariableScope } from "./variable-scopes";
import { maxRateLimitCount, rateLimitPolicies, type RateLimitPolicy } from "../rate-limit/policies";

/**
 * One row per environment variable: the parser walks this table (a required row that is unset, or a value its
 * `parse` refuses, is a startup error naming it; an unset row with a `default` reads as that default), the startup
 * hints print `rule` and the default, and the Configuration table of docs/configuration.md is generated from `required`, `scopes`,
 * `default` and `description` (`npm run readme:config`; a test fails while it differs). A function parses only with
 * its scopes' rows required (a route's Lambda its route's, the Node host all). To add a variable, add a row here
 * (with `parse` when its value has a shape to check, `default` when unset means a value), read it in the parser with
 * `read("NAME")`, and regenerate the table. Consecutive rows with the same description share a line of it.
 */
export interface ConfigVariable<T = unknown> {
  name: string;
  /** A function of one of its scopes will not start without it. */
  required: boolean;
  /**
   * What the variable belongs to (variable-scopes.ts): a function is required to have it, and the stacks give it to
   * a function, only when the function reaches one of these.
   */
  scopes: readonly VariableScope[];
  /**
   * An operator's setting on AWS: `sst deploy` reads it from its own environment, checks it with `parse` (a value
   * refused stops the deploy naming it), and gives it as a plain value to every function of its scopes
   * (stacks/stage-parameters.ts). Unset there, the functions read the default. The stack sets the other rows
   * itself, binds them as SST secrets or parameters, or leaves them to the Node host.
   */
  deploy?: boolean;
  /** A condition the parser checks across rows, as the documented table's Required column states it ("one of these two"). */
  requiredWhen?: string;
  /** The rule, in one line, printed under a startup error. */
  rule: string;
  /** The documented table's description (Markdown). A default that is a value belongs in `default`, not here. */
  description: string;
  /** Turns the trimmed value into its typed value; without it the value is the trimmed string. */
  parse?: VariableParser<T>;
  /** The value an unset variable reads as, written only here: the parser returns it and the documented table shows it. */
  default?: T;
}

/** A row typed by its parser (a string without one) and by whether it has a default, so the reader types its value. */
interface TypedVariable<N extends string, T, D extends T | undefined> extends ConfigVariable<T> {
  name: N;
  default?: D;
}

const row = <const N extends string, T = string, D extends T | undefined = undefined>(
  variable: Omit<ConfigVariable<T>, "name" | "default"> & { name: N; default?: D },
): TypedVariable<N, T, D> => variable;

/** One rate limit's row: every limit is set the same way, and defaults to the interface's (docs/decisions.md#rate-limits). */
const limitRow = <const N extends string>(name: N, description: string, policy: RateLimitPolicy) =>
  row({
    name,
    required: false,
    scopes: ["limits"],
    deploy: true,
    rule: `<count>/<window>: a count from 1 to ${maxRateLimitCount}, a window of whole s, m or h up to 24h (e.g. 60/1m)`,
    description,
    parse: rateLimitPolicy,
    default: policy,
  });

const rows = [
  row({
    name: "DATABASE_URL",
    required: true,
    scopes: ["sql", "probes"],
    rule: "pglite://<dir> (pglite://memory in memory), postgres:// or postgresql://, or rds-data://<database>?resourceArn=<url-encoded>&secretArn=<url-encoded>[&region=]",
    description: "`pglite://<dir>` (`pglite://memory` in memory), `postgres://` / `postgresql://`, or `rds-data://<database>?resourceArn=<url-encoded>&secretArn=<url-encoded>[&region=]`",
    parse: parseDatabaseUrl,
  }),
  row({
    name: "SVC_PUBLIC_BASE_URL",
    required: true,
    scopes: ["playback", "description"],
    rule: "Absolute http(s) base URL of the deployment; a trailing slash is dropped",
    description: "Absolute http(s) base URL of the deployment; playback URLs point back at it",
    parse: parsePublicBaseUrl,
  }),
  row({
    name: "SVC_PDS_HOST",
    required: true,
    scopes: ["tenants"],
    rule: "host or host:port that a tenant DID's custody service endpoint must point at",
    description: "host or host:port that a tenant DID's custody service endpoint must point at; a host without a port means the endpoint scheme's default (443 for https), so `pds.example.com` refuses `https://pds.example.com:8443`",
    parse: parsePdsHost,
  }),
  row({
    name: "SVC_PLAYBACK_SIGNING_KEY",
    required: true,
    scopes: ["playback"],
    rule: "At least 32 characters; signs playback URLs",
    description: "At least 32 characters; signs playback URLs",
    parse: secret,
  }),
  row({
    name: "SVC_BLOB_DIR",
    required: false,
    // providers: a function that chooses the transcriber must know the store is S3, as aws-transcribe needs.
    scopes: ["blobs", "probes", "providers", "rendition-service"],
    requiredWhen: "one of these two",
    rule: "Filesystem blob store directory; this or SVC_BLOB_BUCKET is required",
    description: "Filesystem blob store directory",
  }),
  row({
    name: "SVC_BLOB_BUCKET",
    required: false,
    // providers: a function that chooses the transcriber must know the store is S3, as aws-transcribe needs.
    scopes: ["blobs", "probes", "providers", "rendition-service"],
    requiredWhen: "one of these two",
    rule: "S3 bucket, used when SVC_BLOB_DIR is unset (AWS_REGION, AWS_ENDPOINT_URL_S3 apply)",
    description: "S3 bucket when `SVC_BLOB_DIR` is unset (`AWS_REGION`, `AWS_ENDPOINT_URL_S3` apply)",
  }),
  row({
    name: "SVC_APP_TOKENS",
    required: false,
    scopes: ["tenants"],
    rule: "Comma-separated appId:token; tokens at least 32 characters of printable ASCII without spaces, one per tenant; bad entries and a token already taken are dropped with an error log",
    description: "Comma-separated `appId:token`; tokens at least 32 characters of printable ASCII without spaces (one word of a `Bearer` header), one per tenant; bad entries, and a later tenant's token already taken, are dropped with an error log naming the tenant",
  }),
  row({
    name: "SVC_APP_DIDS",
    required: false,
    scopes: ["tenants", "stages"],
    rule: "Comma-separated appId:did (did:web), one per tenant (a later tenant's DID already taken is dropped with an error log); a tenant in only one of SVC_APP_TOKENS and SVC_APP_DIDS is warned about",
    description: "Comma-separated `appId:did` (did:web, split on the first colon), one per tenant: a later tenant's DID already taken is dropped with an error log naming both; a tenant in only one of the two lists is logged as drift",
  }),
  row({
    name: "SYSTEM_AUTH_TOKEN",
    required: false,
    scopes: ["system", "providers", "renditions", "rendition-service"],
    rule: "At least 32 characters, no tenant's token (that stops start); unset (or too short) makes /api/v1/system/* answer 503",
    description: "At least 32 characters, no tenant's token (that stops start); unset, `/api/v1/system/*` answers 503",
  }),
  row({
    name: "TRUSTED_PROXY_HOPS",
    required: false,
    scopes: ["http"],
    rule: "Non-negative integer",
    description: "Proxy hops trusted in `X-Forwarded-For` (0: the header is ignored)",
    parse: nonNegativeInteger,
    default: 0,
  }),
  row({
    name: "CLIENT_IP_SOURCE",
    required: false,
    scopes: ["http"],
    rule: "forwarded (X-Forwarded-For) or edge (address the edge saw)",
    description: "`forwarded` (`X-Forwarded-For` with the trusted hops) or `edge` (the address the edge saw); the `*_PER_IP` limits key an IPv6 client on its /64",
    parse: clientIpSource,
    default: "forwarded",
  }),
  limitRow(
    "SVC_LIMIT_WRITES_PER_ACTOR",
    "Writes (`POST`, `PATCH` on posts) per acting actor, as `<count>/<window>` with the window in `s`, `m` or `h` (policy `actor`)",
    rateLimitPolicies.write.actor,
  ),
  limitRow("SVC_LIMIT_WRITES_PER_IP", "Writes per client IP, every caller together (policy `aggregate-ip`)", rateLimitPolicies.write["aggregate-ip"]),
  limitRow("SVC_LIMIT_READS_PER_ACTOR", "Reads (lists, a post, its replies) per acting actor (policy `actor`)", rateLimitPolicies.read.actor),
  limitRow(
    "SVC_LIMIT_READS_PER_TENANT",
    "Viewer-less reads per tenant, every end user of its feed together (policy `tenant`)",
    rateLimitPolicies.read.tenant,
  ),
  limitRow(
    "SVC_LIMIT_READS_PER_IP",
    "Reads per client IP, every caller and playback included (policy `aggregate-ip`): raise it when many users share one address",
    rateLimitPolicies.read["aggregate-ip"],
  ),
  limitRow("SVC_LIMIT_PLAYBACK_PER_IP", "Playback (`GET /api/v1/audio`, anonymous) per client IP (policy `ip`)", rateLimitPolicies.read.ip),
  limitRow("SVC_LIMIT_UPLOADS_PER_ACTOR", "Uploads per acting actor (policy `actor`)", rateLimitPolicies.upload.actor),
  limitRow("SVC_LIMIT_UPLOADS_PER_IP", "Uploads per client IP, every caller together (policy `aggregate-ip`)", rateLimitPolicies.upload["aggregate-ip"]),
  row({
    name: "LOG_LEVEL",
    required: false,
    scopes: ["always"],
    rule: "debug, info, warn, error or silent; default info in production, debug otherwise",
    description: "`debug`, `info`, `warn`, `error` or `silent`; default `info` in production, `debug` otherwise",
    parse: logLevel,
  }),
  row({
    name: "NODE_ENV",
    required: false,
    scopes: ["always"],
    rule: "production in deploys",
    description: "`production` in deploys",
    default: "development",
  }),
  row({
    name: "SVC_DB_CONNECT_TIMEOUT_MS",
    required: false,
    scopes: ["sql"],
    deploy: true,
    rule: "Milliseconds to open a database connection before answering 503",
    description: "Milliseconds to open a database connection (pg, the Data API client)",
    parse: milliseconds,
    default: 5_000,
  }),
  row({
    name: "SVC_DB_STATEMENT_TIMEOUT_MS",
    required: false,
    scopes: ["sql"],
    deploy: true,
    rule: "Milliseconds one SQL statement may run (Postgres statement_timeout, client read timeout, Data API request timeout)",
    description: "Milliseconds one SQL statement may take (Postgres `statement_timeout` plus a client read timeout; the Data API request timeout)",
    parse: milliseconds,
    default: 10_000,
  }),
  row({
    name: "SVC_REQUEST_DEADLINE_MS",
    required: false,
    scopes: ["http"],
    deploy: true,
    rule: "Milliseconds a request may take before it is answered 503 (uploads and the worker route on the Node host excepted); on Lambda also the invocation's remaining time less a second; keep it under API Gateway's 30 s",
    description: "Milliseconds a request may take before it is answered 503 `SERVICE_UNAVAILABLE` (on the Node host, multipart uploads are excepted, their idle timeout applies, and so is the task queue's worker route, bounded by the pass's 15 minutes); on Lambda it is also cut to the invocation's remaining time less a second; the default stays under API Gateway's 30 s",
    parse: milliseconds,
    default: 20_000,
  }),
  row({
    name: "SVC_IDLE_TIMEOUT_MS",
    required: false,
    scopes: ["host"],
    rule: "Milliseconds a Node host connection may stall (sending its request, reading its answer, or idle between requests) before it is closed; never while the host works on an answer; also the shutdown's grace",
    description: "Milliseconds a Node host connection may stall (a stalled upload, an answer not read, idle between requests) before it is closed, a stalled upload's staging file removed; it never cuts off a request whose body is in while the host works on its answer; also how long a shutdown waits for open connections",
    parse: milliseconds,
    default: 30_000,
  }),
  row({
    name: "SVC_STORE_JANITOR_INTERVAL_MS",
    required: false,
    scopes: ["host"],
    rule: "Milliseconds between the Node host's sweeps of its blob store for debris (it also sweeps at start)",
    description: "Milliseconds between the Node host's sweeps of its blob store for what a crash leaves behind (it also sweeps once at start); on AWS the janitor function sweeps the bucket hourly instead",
    parse: milliseconds,
    default: 600_000,
  }),
  row({
    name: "SVC_STAGING_MAX_AGE_MS",
    required: false,
    scopes: ["janitor"],
    rule: "Milliseconds after its last write a staged upload is removed as debris",
    description: "Milliseconds after its last write a staged upload that no upload of this process is writing is removed (an upload that keeps above the body rate floor writes its staging file every few minutes at most)",
    parse: milliseconds,
    default: 1_800_000,
  }),
  row({
    name: "SVC_ORPHAN_MIN_AGE_MS",
    required: false,
    scopes: ["janitor"],
    deploy: true,
    rule: "Milliseconds a stored object no row references must be old before it is removed",
    description: "Milliseconds a stored object (an original or a rendition) that no row references must be old before the sweep removes it (younger, it may be an upload or a pass about to record it)",
    parse: milliseconds,
    default: 3_600_000,
  }),
  row({
    name: "SVC_BODY_MIN_BYTES_PER_SECOND",
    required: false,
    scopes: ["host"],
    rule: "Bytes per second an upload body must average over each window on the Node host (0 switches the floor off)",
    description: "Bytes per second an upload's body must average over each `SVC_BODY_RATE_WINDOW_MS` window while it arrives on the Node host; a slower one (an upload trickling a byte now and then, which the idle timeout never catches) is answered 400 and closed, and its staging file removed. `0` switches the floor off",
    parse: nonNegativeInteger,
    default: 1024,
  }),
  row({
    name: "SVC_BODY_RATE_WINDOW_MS",
    required: false,
    scopes: ["host"],
    rule: "Milliseconds over which a Node host upload body's rate is measured against SVC_BODY_MIN_BYTES_PER_SECOND",
    description: "Milliseconds over which an upload body's average rate is measured against `SVC_BODY_MIN_BYTES_PER_SECOND`",
    parse: milliseconds,
    default: 30_000,
  }),
  row({
    name: "SVC_GIT_SHA",
    required: false,
    scopes: ["identity"],
    rule: "Build commit reported by /health",
    description: "Build commit and ISO deploy time reported by `/health`",
  }),
  row({
    name: "SVC_DEPLOYED_AT",
    required: false,
    scopes: ["identity"],
    rule: "ISO 8601 deploy time reported by /health",
    description: "Build commit and ISO deploy time reported by `/health`",
  }),
  row({
    name: "PORT",
    required: false,
    scopes: ["host"],
    rule: "TCP port npm start listens on (0: any free port)",
    description: "The TCP port `npm start` listens on (0: any free port)",
    parse: port,
    default: 3000,
  }),
  row({
    name: "HOST",
    required: false,
    scopes: ["host", "rendition-service"],
    rule: "Address npm start (and npm run rendition) listens on",
    description:
      "The network address `npm start` and `npm run rendition` bind to, not a name clients use (that is `SVC_PUBLIC_BASE_URL`): `127.0.0.1` takes connections from this machine only, `0.0.0.0` from every interface (a container, another machine)",
    default: "127.0.0.1",
  }),
  row({
    name: "AWS_REGION",
    required: false,
    scopes: ["always"],
    rule: "AWS region; Lambda sets it",
    description: "The AWS region (Lambda sets it): the AWS SDK's clients and the hand-signed requests (SSM, `/health`'s probes) use it",
    default: "us-east-1",
  }),
  row({
    name: "AWS_ENDPOINT_URL",
    required: false,
    scopes: ["always"],
    rule: "Endpoint of every AWS service (an emulator), unless the service's own AWS_ENDPOINT_URL_<SERVICE> is set",
    description: "Endpoint overrides (an emulator), as the AWS SDK reads them: `AWS_ENDPOINT_URL_<SERVICE>` (`S3`, `SQS`, `SSM`, `RDS_DATA`, `TRANSCRIBE`), else `AWS_ENDPOINT_URL`",
  }),
  row({
    name: "AWS_ENDPOINT_URL_SSM",
    required: false,
    scopes: ["always"],
    rule: "SSM endpoint (an emulator)",
    description: "Endpoint overrides (an emulator), as the AWS SDK reads them: `AWS_ENDPOINT_URL_<SERVICE>` (`S3`, `SQS`, `SSM`, `RDS_DATA`, `TRANSCRIBE`), else `AWS_ENDPOINT_URL`",
  }),
  row({
    name: "AWS_ENDPOINT_URL_RDS_DATA",
    required: false,
    scopes: ["always"],
    rule: "RDS Data API endpoint (an emulator)",
    description: "Endpoint overrides (an emulator), as the AWS SDK reads them: `AWS_ENDPOINT_URL_<SERVICE>` (`S3`, `SQS`, `SSM`, `RDS_DATA`, `TRANSCRIBE`), else `AWS_ENDPOINT_URL`",
  }),
  row({
    name: "AWS_ENDPOINT_URL_S3",
    required: false,
    scopes: ["always"],
    rule: "S3 endpoint (an emulator); addressed path-style",
    description: "Endpoint overrides (an emulator), as the AWS SDK reads them: `AWS_ENDPOINT_URL_<SERVICE>` (`S3`, `SQS`, `SSM`, `RDS_DATA`, `TRANSCRIBE`), else `AWS_ENDPOINT_URL`",
  }),
  row({
    name: "AWS_ACCESS_KEY_ID",
    required: false,
    scopes: ["always"],
    rule: "The function's AWS credentials; Lambda sets them",
    description: "The function's AWS credentials (Lambda sets them): they sign SSM reads and `/health`'s probes; the AWS SDK's clients find their own",
  }),
  row({
    name: "AWS_SECRET_ACCESS_KEY",
    required: false,
    scopes: ["always"],
    rule: "The function's AWS credentials; Lambda sets them",
    description: "The function's AWS credentials (Lambda sets them): they sign SSM reads and `/health`'s probes; the AWS SDK's clients find their own",
  }),
  row({
    name: "AWS_SESSION_TOKEN",
    required: false,
    scopes: ["always"],
    rule: "The function's AWS credentials; Lambda sets them",
    description: "The function's AWS credentials (Lambda sets them): they sign SSM reads and `/health`'s probes; the AWS SDK's clients find their own",
  }),
  row({
    name: "LAMBDA_TASK_ROOT",
    required: false,
    scopes: ["always"],
    rule: "Where Lambda unpacked the function; Lambda sets it",
    description: "Where Lambda unpacked the function (Lambda sets it): the reference page's script is read from there",
  }),
  row({
    name: "SVC_PROCESSING_INLINE",
    required: false,
    scopes: ["dispatch"],
    rule: "true runs the processing pass inside the create or PATCH request; outside production it wins over SQS and task dispatch",
    description: "`true` runs the processing pass inside the create or PATCH request (outside production it wins over SQS and tasks)",
  }),
  row({
    name: "SVC_PROCESSING_STUB",
    required: false,
    scopes: ["providers"],
    rule: "true wires the pass-through stub providers for every stage, overriding every other provider setting",
    description: "`true` wires the pass-through stub providers for every stage, overriding every other provider setting",
  }),
  row({
    name: "SVC_TRANSCRIBER",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Deployment default transcriber: aws-transcribe, elevenlabs or stub, optionally provider:model",
    description: "Deployment default provider per stage (`provider` or `provider:model`; `stub` only by name)",
  }),
  row({
    name: "SVC_DENOISER",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Deployment default denoiser: elevenlabs, rnnoise or stub",
    description: "Deployment default provider per stage (`provider` or `provider:model`; `stub` only by name)",
  }),
  row({
    name: "SVC_TRIMMER",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Deployment default trimmer: rendition or stub",
    description: "Deployment default provider per stage (`provider` or `provider:model`; `stub` only by name)",
  }),
  row({
    name: "SVC_NORMALIZER",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Deployment default loudness normalizer: rendition or stub",
    description: "Deployment default provider per stage (`provider` or `provider:model`; `stub` only by name)",
  }),
  row({
    name: "SVC_WAVEFORM",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Deployment default waveform maker: rendition or stub",
    description: "Deployment default provider per stage (`provider` or `provider:model`; `stub` only by name)",
  }),
  row({
    name: "SVC_APP_TRANSCRIBERS",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Comma-separated appId:provider[:model] tenant pins; malformed entries are dropped with an error log",
    description: "Tenant pins, comma-separated `appId:provider[:model]`",
  }),
  row({
    name: "SVC_APP_DENOISERS",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Comma-separated appId:provider tenant pins",
    description: "Tenant pins, comma-separated `appId:provider[:model]`",
  }),
  row({
    name: "SVC_APP_TRIMMERS",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Comma-separated appId:provider tenant pins",
    description: "Tenant pins, comma-separated `appId:provider[:model]`",
  }),
  row({
    name: "SVC_APP_NORMALIZERS",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Comma-separated appId:provider tenant pins",
    description: "Tenant pins, comma-separated `appId:provider[:model]`",
  }),
  row({
    name: "SVC_APP_WAVEFORMS",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Comma-separated appId:provider tenant pins",
    description: "Tenant pins, comma-separated `appId:provider[:model]`",
  }),
  row({
    name: "SVC_APP_STT_MODELS",
    required: false,
    scopes: ["providers"],
    deploy: true,
    rule: "Comma-separated appId:model; the tenant's transcription model, above every other model setting",
    description: "Comma-separated `appId:model`: the tenant's transcription model, above every other model setting",
  }),
  row({
    name: "SVC_PLATFORM_TRANSCRIBER",
    required: false,
    parse: platformTranscriber,
    scopes: ["providers"],
    rule: "aws-transcribe (the only value) binds the platform transcriber (needs the S3 blob store); the AWS stack sets it",
    description: "`aws-transcribe` (the only value) binds Amazon Transcribe, with the S3 store; the AWS stack sets it",
  }),
  row({
    name: "SVC_PLATFORM_STT_MODEL",
    required: false,
    parse: modelName,
    scopes: ["providers"],
    deploy: true,
    rule: "Default model of the platform transcriber: an Amazon Transcribe language code (en-US) fixes the language; unset or auto identifies it",
    description: "The platform transcriber's default model: a Transcribe language code (`en-US`) fixes the language, unset or `auto` lets Transcribe identify it",
  }),
  row({
    name: "ELEVENLABS_API_KEY",
    required: false,
    scopes: ["providers"],
    rule: "Enables ElevenLabs for transcribe and denoise",
    description: "Enables ElevenLabs (transcribe, denoise)",
  }),
  row({
    name: "ELEVENLABS_STT_MODEL",
    required: false,
    parse: modelName,
    scopes: ["providers"],
    deploy: true,
    rule: "Default ElevenLabs transcription model; unset, the provider's own default",
    description: "The ElevenLabs transcription model; unset, the provider's own default",
  }),
  row({
    name: "ELEVENLABS_BASE_URL",
    required: false,
    // The rule of SVC_PUBLIC_BASE_URL's parser, under this name; the message never echoes the value (credentials).
    parse: (value, fail, name) => parsePublicBaseUrl(value, () => fail(name, `${name} must be an absolute http(s) URL with no credentials, query or fragment`)),
    scopes: ["providers"],
    deploy: true,
    rule: "ElevenLabs API base URL (tests, proxies): an absolute http(s) URL with no credentials, query or fragment",
    description: "ElevenLabs API base URL (tests, proxies): absolute http(s), no credentials, query or fragment",
    default: "https://api.elevenlabs.io",
  }),
  row({
    name: "SVC_RENDITION_SERVICE_URL",
    required: false,
    scopes: ["providers", "renditions"],
    rule: "Rendition service base URL (absolute http(s)); with SYSTEM_AUTH_TOKEN it enables trim, normalize, waveform, rnnoise and on-demand mp3 renditions",
    description: "The rendition service (absolute http(s) URL); with `SYSTEM_AUTH_TOKEN` it enables trim, normalize, waveform, `rnnoise` and on-demand mp3 renditions",
  }),
  row({
    name: "RENDITION_SERVICE_TOKEN",
    required: false,
    scopes: ["providers", "renditions", "rendition-service"],
    rule: "Bearer token between the service and the rendition service (at least 32 characters, no tenant's token: that stops start); default SYSTEM_AUTH_TOKEN",
    description: "Bearer token the service sends and the rendition service accepts (at least 32 characters, no tenant's token: that stops start); default `SYSTEM_AUTH_TOKEN`",
  }),
  row({
    name: "RENDITION_PORT",
    required: false,
    scopes: ["rendition-service"],
    rule: "TCP port npm run rendition listens on (on HOST)",
    description: "The TCP port `npm run rendition` listens on (on `HOST`)",
    parse: port,
    default: 3001,
  }),
  row({
    name: "FFMPEG_PATH",
    required: false,
    scopes: ["stages", "rendition-service"],
    rule: "ffmpeg binary of the rendition service and the elevenlabs denoiser; default the static build of @ffmpeg-installer",
    description: "The ffmpeg binary of the rendition service and of the `elevenlabs` denoiser; default the static build from `@ffmpeg-installer`",
  }),
  row({
    name: "PROCESSING_QUEUE_URL",
    required: false,
    scopes: ["dispatch"],
    rule: "SQS queue for processing jobs; a Node host with it set also consumes it (AWS_REGION, AWS_ENDPOINT_URL_SQS apply)",
    description: "SQS queue of processing jobs; a Node host with it set also consumes it (`AWS_REGION`, `AWS_ENDPOINT_URL_SQS` apply)",
  }),
  row({
    name: "PROCESSING_DEAD_LETTER_QUEUE_URL",
    required: false,
    scopes: ["host"],
    rule: "The queue's dead-letter queue, whose jobs a Node host settles failed (dead_letter); unset, the one the queue's redrive policy names",
    description: "Its dead-letter queue, whose jobs a Node host settles `failed` (`dead_letter`); unset, the one the queue's redrive policy names (read with `sqs:GetQueueAttributes` and `sqs:GetQueueUrl`)",
  }),
  row({
    name: "SVC_LEASE_MS",
    required: false,
    scopes: ["stages"],
    deploy: true,
    rule: "Milliseconds a pass's lease on a post lasts past its last heartbeat: how soon the sweep may re-dispatch the stages of a pass that died",
    description: "Milliseconds a processing pass's lease on a post lasts past its last heartbeat: a pass that dies leaves its stages to the sweep this long after its last renewal",
    parse: milliseconds,
    default: 60_000,
  }),
  row({
    name: "SVC_LEASE_HEARTBEAT_MS",
    required: false,
    scopes: ["stages"],
    deploy: true,
    rule: "Milliseconds between a running pass's renewals of its lease; at most a third of SVC_LEASE_MS (a larger value is logged and lowered to that)",
    description: "Milliseconds between a running pass's renewals of its lease; at most a third of `SVC_LEASE_MS`, so two renewals can fail before it lapses (a larger value is logged at error level and lowered to that)",
    parse: milliseconds,
    default: 20_000,
  }),
  row({
    name: "SVC_SWEEP_INTERVAL_MS",
    required: false,
    scopes: ["host"],
    rule: "Milliseconds between the Node host's sweeps (lapsed leases and stale pending stages re-dispatched, undelivered webhook events sent)",
    description: "Milliseconds between the Node host's sweeps, which re-dispatch the stages of lapsed leases and deliver webhook events left undelivered (on AWS a schedule runs the sweep every 5 minutes)",
    parse: milliseconds,
    default: 30_000,
  }),
  row({
    name: "PROCESSING_CONCURRENCY",
    required: false,
    scopes: ["host"],
    rule: "1 to 64",
    description:
      "Processing jobs a Node host runs at once from `PROCESSING_QUEUE_URL` (each on a post of its own); a pass mostly waits on its providers, and one slow transcription must not hold every other post",
    parse: concurrency,
    default: 4,
  }),
  row({
    name: "SVC_TASKS_LOCATION",
    required: false,
    scopes: ["dispatch"],
    rule: "Google Cloud Tasks location; with SVC_TASKS_QUEUE and SVC_TASKS_WORKER_URL enables task dispatch (a partial set is logged and off)",
    description: "Google Cloud Tasks dispatch, all three or none, with `SYSTEM_AUTH_TOKEN` (a partial set, or one without the token, is logged at error level and dispatch is off); the worker URL is this service's `/api/v1/system/process-audio`",
  }),
  row({
    name: "SVC_TASKS_QUEUE",
    required: false,
    scopes: ["dispatch"],
    rule: "Google Cloud Tasks queue name",
    description: "Google Cloud Tasks dispatch, all three or none, with `SYSTEM_AUTH_TOKEN` (a partial set, or one without the token, is logged at error level and dispatch is off); the worker URL is this service's `/api/v1/system/process-audio`",
  }),
  row({
    name: "SVC_TASKS_WORKER_URL",
    required: false,
    scopes: ["dispatch"],
    rule: "Absolute URL of this service's /api/v1/system/process-audio, called with SYSTEM_AUTH_TOKEN",
    description: "Google Cloud Tasks dispatch, all three or none, with `SYSTEM_AUTH_TOKEN` (a partial set, or one without the token, is logged at error level and dispatch is off); the worker URL is this service's `/api/v1/system/process-audio`",
  }),
  row({
    name: "SVC_TASKS_PROJECT",
    required: false,
    scopes: ["dispatch"],
    rule: "Google Cloud project; default the metadata server's",
    description: "Cloud Tasks project and API bearer token; default the metadata server's",
  }),
  row({
    name: "SVC_TASKS_ACCESS_TOKEN",
    required: false,
    scopes: ["dispatch"],
    rule: "Bearer token for the Cloud Tasks API; default the metadata server's access token",
    description: "Cloud Tasks project and API bearer token; default the metadata server's",
  }),
  row({
    name: "CLOUD_TASKS_BASE_URL",
    required: false,
    scopes: ["dispatch"],
    rule: "Cloud Tasks API endpoint (tests, proxies)",
    description: "Cloud Tasks API endpoint (tests, proxies)",
    default: "https://cloudtasks.googleapis.com",
  }),
  row({
    name: "GCE_METADATA_HOST",
    required: false,
    scopes: ["dispatch"],
    rule: "Google metadata server host (tests), as Google's client libraries read it",
    description: "The Google metadata server (tests), as Google's client libraries read it",
    default: "metadata.google.internal",
  }),
  row({
    name: "SVC_APP_WEBHOOK_URLS",
    required: false,
    scopes: ["webhooks"],
    rule: "Comma-separated appId:url; https unless the host is loopback",
    description: "Comma-separated `appId:url`; https unless the host is loopback",
  }),
  row({
    name: "SVC_APP_WEBHOOK_SECRETS",
    required: false,
    scopes: ["webhooks"],
    rule: "Comma-separated appId:secret, at least 32 characters; a tenant needs both a URL and a secret",
    description: "Comma-separated `appId:secret`, at least 32 characters; a tenant in only one of the two lists is logged at error level and sent nothing",
  }),
  row({
    name: "SVC_WEBHOOK_RETRY_BASE_SECONDS",
    required: false,
    scopes: ["webhooks"],
    deploy: true,
    rule: "Seconds before an event whose quick attempts failed is tried again from the outbox; each later round waits twice as long",
    description: "Seconds before an event whose 3 quick attempts failed is tried again from the outbox (by the sweep); each later round waits twice as long, up to the cap",
    parse: seconds,
    default: 30,
  }),
  row({
    name: "SVC_WEBHOOK_RETRY_CAP_SECONDS",
    required: false,
    scopes: ["webhooks"],
    deploy: true,
    rule: "Longest wait in seconds between two rounds of an undelivered event",
    description: "The longest wait, in seconds, between two rounds of an undelivered event",
    parse: seconds,
    default: 3600,
  }),
  row({
    name: "SVC_WEBHOOK_GIVE_UP_SECONDS",
    required: false,
    scopes: ["webhooks"],
    deploy: true,
    rule: "Seconds after its settle (or an operator's redelivery) that an undelivered event is given up and logged once",
    description: "Seconds after its settle (or an operator's redelivery) at which an event still undelivered is given up (`given_up`), logged once with its event id",
    parse: seconds,
    default: 86_400,
  }),
  row({
    name: "SVC_WEBHOOK_RETENTION_SECONDS",
    required: false,
    scopes: ["webhooks"],
    deploy: true,
    rule: "Seconds an event is kept in the outbox after its outcome (delivered, refused or given up) before the sweep deletes it",
    description: "Seconds an event is kept in the outbox after its outcome (`delivered`, `failed` or `given_up`), for the operator's list and redelivery, before the sweep deletes it; an open event is never deleted",
    parse: seconds,
    default: 2_592_000,
  }),
] as const;

export const configVariables: readonly ConfigVariable[] = rows;

export type VariableName = (typeof rows)[number]["name"];

/** What the reader gives for a variable: its parser's type, or undefined too when the row has no default. */
export type VariableValue<N extends VariableName> =
  Extract<(typeof rows)[number], { name: N }> extends TypedVariable<N, infer T, infer D>
    ? [Exclude<D, undefined>] extends [never]
      ? T | undefined
      : T
    : never;

/** The rows a function with these scopes reads: its own, and every function's (`always`). */
export const variablesOf = (scopes: readonly VariableScope[]): ConfigVariable[] =>
  configVariables.filter((row) => row.scopes.some((scope) => scope === "always" || scopes.includes(scope)));

/** The row's rule with its default, as a startup error prints it under the problem. */
export function describeVariable(name: string): string | undefined {
  const variable = configVariables.find((v) => v.name === name);
  if (!variable) return undefined;
  return variable.default === undefined ? variable.rule : `${variable.rule}; default ${String(variable.default)}`;
}
