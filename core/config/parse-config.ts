/** Parses the environment once into a typed Config; fatal problems throw ConfigError, per-tenant ones are logged and dropped. */
import { defaultTimeouts, type BlobConfig, type Config, type DatabaseConfig, type LogLevel, type Tenant } from "./types";
import { parseAppList } from "./app-list";
import { parseProcessingConfig } from "./processing-config";
import { parseRenditionTarget } from "./rendition-target";
import { isDidWeb } from "../tenancy/did-web";

export type ConfigLog = {
  error(msg: string, ...extra: Record<string, unknown>[]): void;
  warn(msg: string, ...extra: Record<string, unknown>[]): void;
};

export interface ConfigProblem {
  variable: string;
  message: string;
}

/** Every fatal problem found, so an operator fixes them in one pass; `message` names each variable. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map((p) => p.message).join("; "));
    this.name = "ConfigError";
  }
}

const minSecretLength = 32;
const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

export function parseConfig(env: NodeJS.ProcessEnv, log: ConfigLog): Config {
  const problems: ConfigProblem[] = [];
  const fail = (variable: string, message: string) => {
    problems.push({ variable, message });
    return undefined;
  };
  // Empty and whitespace-only values count as unset.
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };

  const nodeEnv = read("NODE_ENV") ?? "development";
  const production = nodeEnv === "production";

  const rawLevel = read("LOG_LEVEL");
  const logLevel: LogLevel | undefined =
    rawLevel === undefined
      ? production
        ? "info"
        : "debug"
      : (logLevels as readonly string[]).includes(rawLevel)
        ? (rawLevel as LogLevel)
        : fail("LOG_LEVEL", `LOG_LEVEL must be one of ${logLevels.join(", ")}`);

  const database = parseDatabaseUrl(read("DATABASE_URL"), fail);
  const publicBaseUrl = parsePublicBaseUrl(read("SVC_PUBLIC_BASE_URL"), fail);
  const pdsHost = parsePdsHost(read("SVC_PDS_HOST"), fail);

  const playbackSigningKey = read("SVC_PLAYBACK_SIGNING_KEY");
  if (playbackSigningKey === undefined) fail("SVC_PLAYBACK_SIGNING_KEY", "SVC_PLAYBACK_SIGNING_KEY is required");
  else if (playbackSigningKey.length < minSecretLength) {
    fail("SVC_PLAYBACK_SIGNING_KEY", `SVC_PLAYBACK_SIGNING_KEY must be at least ${minSecretLength} characters`);
  }

  const blobDir = read("SVC_BLOB_DIR");
  const blobBucket = read("SVC_BLOB_BUCKET");
  const blobs: BlobConfig | undefined = blobDir
    ? { kind: "fs", dir: blobDir }
    : blobBucket
      ? { kind: "s3", bucket: blobBucket }
      : fail("SVC_BLOB_DIR", "SVC_BLOB_DIR or SVC_BLOB_BUCKET is required");

  let systemAuthToken = read("SYSTEM_AUTH_TOKEN");
  if (systemAuthToken !== undefined && systemAuthToken.length < minSecretLength) {
    log.error(`SYSTEM_AUTH_TOKEN is shorter than ${minSecretLength} characters and is ignored; system routes answer 503`, {
      variable: "SYSTEM_AUTH_TOKEN",
    });
    systemAuthToken = undefined;
  }

  const rawHops = read("TRUSTED_PROXY_HOPS");
  const trustedProxyHops =
    rawHops === undefined
      ? 0
      : /^\d+$/.test(rawHops) && Number.isSafeInteger(Number(rawHops))
        ? Number(rawHops)
        : fail("TRUSTED_PROXY_HOPS", "TRUSTED_PROXY_HOPS must be a non-negative integer");

  const rawIpSource = read("CLIENT_IP_SOURCE") ?? "forwarded";
  const clientIpSource =
    rawIpSource === "forwarded" || rawIpSource === "edge"
      ? rawIpSource
      : fail("CLIENT_IP_SOURCE", "CLIENT_IP_SOURCE must be forwarded or edge");

  const rawDeployedAt = read("SVC_DEPLOYED_AT");
  let deployedAt: string | null = null;
  if (rawDeployedAt !== undefined) {
    // Build identity is cosmetic: a bad value is reported, not allowed to stop the service.
    const time = Date.parse(rawDeployedAt);
    if (Number.isNaN(time)) log.error("SVC_DEPLOYED_AT is not an ISO 8601 time and is ignored", { variable: "SVC_DEPLOYED_AT" });
    else deployedAt = new Date(time).toISOString();
  }

  const positiveMs = (name: string, fallback: number): number | undefined => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    return /^\d{1,7}$/.test(raw) && Number(raw) > 0 ? Number(raw) : fail(name, `${name} must be a whole number of milliseconds from 1 to 9999999`);
  };
  const timeouts = {
    dbConnectMs: positiveMs("SVC_DB_CONNECT_TIMEOUT_MS", defaultTimeouts.dbConnectMs)!,
    dbStatementMs: positiveMs("SVC_DB_STATEMENT_TIMEOUT_MS", defaultTimeouts.dbStatementMs)!,
    requestDeadlineMs: positiveMs("SVC_REQUEST_DEADLINE_MS", defaultTimeouts.requestDeadlineMs)!,
  };

  const tenants = parseTenants(env, log);
  const processing = parseProcessingConfig(env, log);
  const rendition = parseRenditionTarget(read, systemAuthToken, fail, log);

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    nodeEnv,
    production,
    logLevel: logLevel!,
    database: database!,
    blobs: blobs!,
    ...(blobBucket !== undefined && { blobBucket }),
    publicBaseUrl: publicBaseUrl!,
    pdsHost: pdsHost!,
    playbackSigningKey: playbackSigningKey!,
    tenants,
    ...(systemAuthToken !== undefined && { systemAuthToken }),
    ...(rendition !== undefined && { rendition }),
    trustedProxyHops: trustedProxyHops!,
    clientIpSource: clientIpSource!,
    sha: read("SVC_GIT_SHA") ?? null,
    deployedAt,
    processing,
    timeouts,
  };
}

type Fail = (variable: string, message: string) => undefined;

function parseDatabaseUrl(value: string | undefined, fail: Fail): DatabaseConfig | undefined {
  const name = "DATABASE_URL";
  if (value === undefined) return fail(name, `${name} is required`);
  // Messages never echo the value: it may hold a password.
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme === "pglite") {
    const dir = value.slice("pglite://".length);
    if (dir === "") return fail(name, `${name} pglite:// needs a directory or memory`);
    return { kind: "pglite", dir };
  }
  if (scheme === "postgres" || scheme === "postgresql") {
    try {
      new URL(value);
    } catch {
      return fail(name, `${name} is not a valid postgres:// URL`);
    }
    return { kind: "postgres", url: value };
  }
  if (scheme === "rds-data") {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return fail(name, `${name} is not a valid rds-data:// URL`);
    }
    const database = decodeURIComponent(url.hostname);
    const resourceArn = url.searchParams.get("resourceArn")?.trim();
    const secretArn = url.searchParams.get("secretArn")?.trim();
    const region = url.searchParams.get("region")?.trim();
    if (!database) return fail(name, `${name} rds-data:// needs a database name`);
    if (!resourceArn || !secretArn) return fail(name, `${name} rds-data:// needs resourceArn and secretArn`);
    return { kind: "rds-data", database, resourceArn, secretArn, ...(region && { region }) };
  }
  return fail(name, `${name} must start with pglite://, postgres://, postgresql:// or rds-data://`);
}

function parsePublicBaseUrl(value: string | undefined, fail: Fail): string | undefined {
  const name = "SVC_PUBLIC_BASE_URL";
  if (value === undefined) return fail(name, `${name} is required`);
  const invalid = () => fail(name, `${name} must be an absolute http(s) URL with no query, fragment or credentials`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid();
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return invalid();
  if (url.search || url.hash || url.username || url.password || value.includes("?") || value.includes("#")) return invalid();
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

function parsePdsHost(value: string | undefined, fail: Fail): string | undefined {
  const name = "SVC_PDS_HOST";
  if (value === undefined) return fail(name, `${name} is required`);
  const invalid = () => fail(name, `${name} must be a host or host:port, with no scheme or path`);
  if (/[/?#@\\\s]/.test(value)) return invalid();
  try {
    const url = new URL(`http://${value}`);
    if (!url.hostname) return invalid();
  } catch {
    return invalid();
  }
  return value.toLowerCase();
}

function parseTenants(env: NodeJS.ProcessEnv, log: ConfigLog): Map<string, Tenant> {
  const tokens = parseAppList(
    "SVC_APP_TOKENS",
    env.SVC_APP_TOKENS,
    (token) => (token.length < minSecretLength ? `token is shorter than ${minSecretLength} characters` : undefined),
    log,
  );
  // One token naming two tenants would make the tenancy key ambiguous: the later tenant loses it.
  const owners = new Map<string, string>();
  for (const [appId, token] of tokens) {
    const owner = owners.get(token);
    if (owner !== undefined) {
      log.error(`SVC_APP_TOKENS: entry for tenant "${appId}" dropped: same token as tenant "${owner}"`, {
        variable: "SVC_APP_TOKENS",
        appId,
      });
      tokens.delete(appId);
    } else owners.set(token, appId);
  }

  const dids = parseAppList(
    "SVC_APP_DIDS",
    env.SVC_APP_DIDS,
    (did) => (isDidWeb(did) ? undefined : "not a valid did:web DID"),
    log,
  );

  const tenants = new Map<string, Tenant>();
  for (const appId of new Set([...tokens.keys(), ...dids.keys()])) {
    const token = tokens.get(appId);
    const did = dids.get(appId);
    if (token === undefined) {
      log.warn(`Tenant "${appId}" is in SVC_APP_DIDS but not SVC_APP_TOKENS; it cannot call the API`, { appId });
    } else if (did === undefined) {
      log.warn(`Tenant "${appId}" is in SVC_APP_TOKENS but not SVC_APP_DIDS; its custody cannot be proven`, { appId });
    }
    tenants.set(appId, { appId, ...(token !== undefined && { token }), ...(did !== undefined && { did }) });
  }
  return tenants;
}
