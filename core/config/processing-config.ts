/** Enrichment configuration: providers and their pins, dispatch, webhooks. Parsed once with the rest of Config. */
import { stageOrder, type Stage } from "../records/stages";
import { maxModelLength } from "../records/transcript-record";
import type { VariableName } from "./variables";
import { parseAppList } from "./app-list";
import type { ReadVariable } from "./read-variables";
import { shortSecret } from "./secret-length";
import type { Logger } from "../observability/logger";

/** A provider named in a variable, optionally pinning a model (`elevenlabs:scribe_v2`). */
export interface ProviderValue {
  provider: string;
  model?: string;
}

export interface TaskQueueConfig {
  project?: string;
  location: string;
  queue: string;
  workerUrl: string;
  /** Google Cloud Tasks REST endpoint; CLOUD_TASKS_BASE_URL overrides it (tests, proxies). */
  baseUrl: string;
  /** A configured bearer credential; without it the access token comes from the metadata server. */
  accessToken?: string;
  /** GCE_METADATA_HOST: the metadata server that knows the project and the access token. */
  metadataHost: string;
}

export interface WebhookTarget {
  url: string;
  secret: string;
}

/** How the outbox keeps trying an event its quick attempts could not deliver (docs/decisions.md#webhooks). */
export interface WebhookRetry {
  /** Wait before the first retry round; each later one waits twice as long, up to `capMs`. */
  baseMs: number;
  capMs: number;
  /** Age (from the settle, or an operator's redelivery) past which an undelivered event is given up. */
  giveUpMs: number;
  /** How long an event is kept after its outcome before the sweep deletes it: the outbox does not grow forever. */
  retentionMs: number;
}

export interface ProcessingConfig {
  /** SVC_PROCESSING_STUB=true: stub providers for every stage, whatever else is set. */
  stub: boolean;
  /** SVC_PROCESSING_INLINE=true: run the pass inside the request. */
  inline: boolean;
  /** Deployment defaults (SVC_TRANSCRIBER, SVC_DENOISER, SVC_TRIMMER, SVC_NORMALIZER, SVC_WAVEFORM). */
  defaults: Partial<Record<Stage, ProviderValue>>;
  /** Tenant pins (SVC_APP_TRANSCRIBERS, ...), appId -> value; entries not appId:value already dropped. */
  tenantPins: Record<Stage, ReadonlyMap<string, ProviderValue>>;
  /** SVC_APP_STT_MODELS: appId -> transcription model. */
  tenantSttModels: ReadonlyMap<string, string>;
  /** SVC_PLATFORM_TRANSCRIBER: the platform transcriber bound to this deployment (`aws-transcribe`). */
  platformTranscriber?: string;
  platformSttModel?: string;
  elevenLabsApiKey?: string;
  elevenLabsSttModel?: string;
  /** ELEVENLABS_BASE_URL (tests, proxies). */
  elevenLabsBaseUrl: string;
  /** PROCESSING_QUEUE_URL (SQS). */
  queueUrl?: string;
  /** PROCESSING_CONCURRENCY: jobs the Node host's consumer runs at once. */
  concurrency: number;
  /** PROCESSING_DEAD_LETTER_QUEUE_URL: the Node host consumes it too when set. */
  deadLetterQueueUrl?: string;
  /** Complete Cloud Tasks settings, or undefined (a partial set is logged and leaves this off). */
  tasks?: TaskQueueConfig;
  /** Tenants that get webhooks: both a valid URL and a valid secret. */
  webhooks: ReadonlyMap<string, WebhookTarget>;
  /** A pass's lease on a post (SVC_LEASE_MS) and how often it renews it (SVC_LEASE_HEARTBEAT_MS, at most a third). */
  lease: LeaseTiming;
  /** SVC_SWEEP_INTERVAL_MS: the Node host's sweep period. */
  sweepIntervalMs: number;
  /** SVC_WEBHOOK_RETRY_BASE_SECONDS, _CAP_SECONDS, _GIVE_UP_SECONDS: how the outbox retries, and for how long. */
  webhookRetry: WebhookRetry;
}

export interface LeaseTiming {
  ms: number;
  heartbeatMs: number;
}

export const processingVariables = {
  defaults: { transcribe: "SVC_TRANSCRIBER", denoise: "SVC_DENOISER", trim: "SVC_TRIMMER", normalize: "SVC_NORMALIZER", waveform: "SVC_WAVEFORM" },
  pins: {
    transcribe: "SVC_APP_TRANSCRIBERS",
    denoise: "SVC_APP_DENOISERS",
    trim: "SVC_APP_TRIMMERS",
    normalize: "SVC_APP_NORMALIZERS",
    waveform: "SVC_APP_WAVEFORMS",
  },
} as const satisfies Record<string, Record<Stage, VariableName>>;

const providerName = /^[a-z0-9][a-z0-9-]*$/;
const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** `provider` or `provider:model`; undefined when the provider part is not a provider name. */
export const parseProviderValue = (value: string): ProviderValue | undefined => {
  const colon = value.indexOf(":");
  const provider = (colon < 0 ? value : value.slice(0, colon)).trim();
  const model = colon < 0 ? "" : value.slice(colon + 1).trim();
  if (!providerName.test(provider) || model.length > maxModelLength) return undefined;
  return model ? { provider, model } : { provider };
};

/**
 * `read` is the variable table's reader (`readVariables`), as for every other variable: each name read is a row, and
 * unset, empty and whitespace-only values read alike. Misconfigured processing settings are logged and dropped here
 * rather than refused at startup: the rest of the service runs without them.
 */
export function parseProcessingConfig(read: ReadVariable, log: Pick<Logger, "error" | "warn">): ProcessingConfig {
  const flag = (name: VariableName): boolean => {
    const value = read(name);
    if (value === undefined || value === "false") return false;
    if (value === "true") return true;
    log.error(`${name} must be true or false; treated as false`, { variable: name });
    return false;
  };

  /**
   * A deployment default's or a tenant pin's value. One that is not provider or provider:model still names
   * something: the stage is misconfigured (for that tenant) rather than silently given another provider.
   */
  const providerValue = (stage: Stage, name: string, raw: string, appId?: string): ProviderValue => {
    const value = parseProviderValue(raw);
    const [who, whose, fields] = appId === undefined ? [name, "", { variable: name }] : [`${name}: tenant "${appId}"`, " for it", { variable: name, appId }];
    if (!value) log.error(`${who} is not provider or provider:model (a model of at most ${maxModelLength} characters); ${stage} is unavailable${whose}`, fields);
    else if (value.model && stage !== "transcribe") log.warn(`${who} pins a model, but ${stage} has no models; ignored`, fields);
    return value ?? { provider: raw };
  };

  const defaults: Partial<Record<Stage, ProviderValue>> = {};
  for (const stage of stageOrder) {
    const name = processingVariables.defaults[stage];
    const raw = read(name);
    if (raw !== undefined) defaults[stage] = providerValue(stage, name, raw);
  }

  const tenantPins = {} as Record<Stage, Map<string, ProviderValue>>;
  for (const stage of stageOrder) {
    const name = processingVariables.pins[stage];
    // Only an entry that is not appId:value is dropped; a well-formed one is the tenant's, as a default is the deployment's.
    const list = parseAppList(name, read(name), () => undefined, log);
    tenantPins[stage] = new Map([...list].map(([appId, raw]) => [appId, providerValue(stage, name, raw, appId)]));
  }
  const tenantSttModels = parseAppList(
    "SVC_APP_STT_MODELS",
    read("SVC_APP_STT_MODELS"),
    (model) => (model.length > maxModelLength ? `a model of more than ${maxModelLength} characters` : undefined),
    log,
  );

  return {
    stub: flag("SVC_PROCESSING_STUB"),
    inline: flag("SVC_PROCESSING_INLINE"),
    defaults,
    tenantPins,
    tenantSttModels,
    ...optional("platformTranscriber", read("SVC_PLATFORM_TRANSCRIBER")),
    ...optional("platformSttModel", read("SVC_PLATFORM_STT_MODEL")),
    ...optional("elevenLabsApiKey", read("ELEVENLABS_API_KEY")),
    ...optional("elevenLabsSttModel", read("ELEVENLABS_STT_MODEL")),
    // Parsed by its row (variables.ts): absolute http(s), trailing slashes already stripped.
    elevenLabsBaseUrl: read("ELEVENLABS_BASE_URL"),
    ...optional("queueUrl", read("PROCESSING_QUEUE_URL")),
    concurrency: read("PROCESSING_CONCURRENCY"),
    ...optional("deadLetterQueueUrl", read("PROCESSING_DEAD_LETTER_QUEUE_URL")),
    ...optional("tasks", parseTaskQueue(read, log)),
    webhooks: parseWebhooks(read, log),
    lease: parseLeaseTiming(read, log),
    sweepIntervalMs: read("SVC_SWEEP_INTERVAL_MS"),
    webhookRetry: {
      baseMs: read("SVC_WEBHOOK_RETRY_BASE_SECONDS") * 1000,
      capMs: read("SVC_WEBHOOK_RETRY_CAP_SECONDS") * 1000,
      giveUpMs: read("SVC_WEBHOOK_GIVE_UP_SECONDS") * 1000,
      retentionMs: read("SVC_WEBHOOK_RETENTION_SECONDS") * 1000,
    },
  };
}

/** A heartbeat slower than a third of the lease is lowered to that: two renewals may fail before the lease lapses. */
function parseLeaseTiming(read: ReadVariable, log: Pick<Logger, "error">): LeaseTiming {
  const ms = read("SVC_LEASE_MS");
  const heartbeatMs = read("SVC_LEASE_HEARTBEAT_MS");
  const most = Math.max(1, Math.floor(ms / 3));
  if (heartbeatMs <= most) return { ms, heartbeatMs };
  log.error(`SVC_LEASE_HEARTBEAT_MS is over a third of SVC_LEASE_MS; lowered to ${most}`, { variable: "SVC_LEASE_HEARTBEAT_MS" });
  return { ms, heartbeatMs: most };
}

const optional = <K extends string, V>(key: K, value: V | undefined) => (value === undefined ? {} : ({ [key]: value } as { [P in K]: V }));

function parseTaskQueue(read: ReadVariable, log: Pick<Logger, "error">): TaskQueueConfig | undefined {
  const location = read("SVC_TASKS_LOCATION");
  const queue = read("SVC_TASKS_QUEUE");
  const workerUrl = read("SVC_TASKS_WORKER_URL");
  const set = [location, queue, workerUrl].filter((v) => v !== undefined).length;
  if (set === 0) return undefined;
  if (set < 3) {
    log.error("the task queue needs all of SVC_TASKS_LOCATION, SVC_TASKS_QUEUE and SVC_TASKS_WORKER_URL; task dispatch is off", {
      variable: "SVC_TASKS_WORKER_URL",
    });
    return undefined;
  }
  if (!isAbsoluteHttpUrl(workerUrl!)) {
    log.error("SVC_TASKS_WORKER_URL must be an absolute http(s) URL; task dispatch is off", { variable: "SVC_TASKS_WORKER_URL" });
    return undefined;
  }
  const project = read("SVC_TASKS_PROJECT");
  const accessToken = read("SVC_TASKS_ACCESS_TOKEN");
  return {
    location: location!,
    queue: queue!,
    workerUrl: workerUrl!,
    baseUrl: read("CLOUD_TASKS_BASE_URL").replace(/\/+$/, ""),
    metadataHost: read("GCE_METADATA_HOST"),
    ...(project !== undefined && { project }),
    ...(accessToken !== undefined && { accessToken }),
  };
}

const isAbsoluteHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
};

/** A webhook target is https, or http on a loopback host. */
export const webhookUrlProblem = (value: string): string | undefined => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "not an absolute URL";
  }
  // fetch refuses a URL with credentials: such an entry would fail every delivery as a "network error".
  if (url.username || url.password) return "must not carry credentials (user:password@)";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && loopbackHosts.has(url.hostname)) return undefined;
  return "must be https unless the host is loopback";
};

function parseWebhooks(read: ReadVariable, log: Pick<Logger, "error">): Map<string, WebhookTarget> {
  const urls = parseAppList("SVC_APP_WEBHOOK_URLS", read("SVC_APP_WEBHOOK_URLS"), webhookUrlProblem, log);
  const secrets = parseAppList("SVC_APP_WEBHOOK_SECRETS", read("SVC_APP_WEBHOOK_SECRETS"), shortSecret("secret"), log);
  const targets = new Map<string, WebhookTarget>();
  for (const appId of new Set([...urls.keys(), ...secrets.keys()])) {
    const url = urls.get(appId);
    const secret = secrets.get(appId);
    if (url === undefined || secret === undefined) {
      const missing = url === undefined ? "SVC_APP_WEBHOOK_URLS" : "SVC_APP_WEBHOOK_SECRETS";
      log.error(`tenant "${appId}" has no valid entry in ${missing}; it is sent no webhooks`, { variable: missing, appId });
      continue;
    }
    targets.set(appId, { url, secret });
  }
  return targets;
}
