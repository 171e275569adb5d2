/** Parses the environment once into a typed Config; fatal problems throw ConfigError, per-tenant ones are logged and dropped. */
import type { BlobConfig, Config, DatabaseConfig, Tenant } from "./types";
import { parseAppList } from "./app-list";
import { awsEnvironmentOf } from "./aws-environment";
import { ConfigError, type ConfigProblem } from "./config-error";
import { parseProcessingConfig } from "./processing-config";
import { warnEntriesOfNoTenant } from "./entries-of-no-tenant";
import { parseRenditionTarget } from "./rendition-target";
import { didWebDocumentUrl, isDidWeb } from "../tenancy/did-web";
import { readVariables, type ReadVariable } from "./read-variables";
import { isShortSecret, minSecretLength, shortSecret } from "./secret-length";
import type { VariableScope } from "./variable-scopes";
import type { Logger } from "../observability/logger";

/** Configuration problems short of fatal are logged (a bad list entry, a tenant in one list only). */
export type ConfigLog = Pick<Logger, "error" | "warn">;

export { ConfigError, type ConfigProblem } from "./config-error";

/**
 * `scopes` are what the function reaches (core/runtime/lambda/function-scopes.ts): only their required variables are
 * required, and a value outside them may be absent (its field is then unset). Without it every scope is (the Node
 * host, `npm run check-config`).
 */
export function parseConfig(env: NodeJS.ProcessEnv, log: ConfigLog, scopes?: readonly VariableScope[]): Config {
  const problems: ConfigProblem[] = [];
  const fail = (variable: string, message: string) => {
    problems.push({ variable, message });
    return undefined;
  };
  // The table's walk: required rows, and each value through its row's parser (see variables.ts).
  const read = readVariables(env, fail, scopes);

  const nodeEnv = read("NODE_ENV");
  const production = nodeEnv === "production";
  const logLevel = read("LOG_LEVEL") ?? (production ? "info" : "debug");
  const database = read("DATABASE_URL");
  const publicBaseUrl = read("SVC_PUBLIC_BASE_URL");
  const pdsHost = read("SVC_PDS_HOST");
  const playbackSigningKey = read("SVC_PLAYBACK_SIGNING_KEY");

  const blobDir = read("SVC_BLOB_DIR");
  const blobBucket = read("SVC_BLOB_BUCKET");
  const blobs: BlobConfig | undefined = blobDir
    ? { kind: "fs", dir: blobDir }
    : blobBucket
      ? { kind: "s3", bucket: blobBucket }
      : !scopes || scopes.includes("blobs") || scopes.includes("probes")
        ? fail("SVC_BLOB_DIR", "SVC_BLOB_DIR or SVC_BLOB_BUCKET is required")
        : undefined;

  let systemAuthToken = read("SYSTEM_AUTH_TOKEN");
  if (systemAuthToken !== undefined && isShortSecret(systemAuthToken)) {
    log.error(`SYSTEM_AUTH_TOKEN is shorter than ${minSecretLength} characters and is ignored; system routes answer 503`, {
      variable: "SYSTEM_AUTH_TOKEN",
    });
    systemAuthToken = undefined;
  }


  const rawDeployedAt = read("SVC_DEPLOYED_AT");
  let deployedAt: string | null = null;
  if (rawDeployedAt !== undefined) {
    // Build identity is cosmetic: a bad value is reported, not allowed to stop the service.
    const time = Date.parse(rawDeployedAt);
    if (Number.isNaN(time)) log.error("SVC_DEPLOYED_AT is not an ISO 8601 time and is ignored", { variable: "SVC_DEPLOYED_AT" });
    else deployedAt = new Date(time).toISOString();
  }

  const timeouts = {
    dbConnectMs: read("SVC_DB_CONNECT_TIMEOUT_MS"),
    dbStatementMs: read("SVC_DB_STATEMENT_TIMEOUT_MS"),
    requestDeadlineMs: read("SVC_REQUEST_DEADLINE_MS"),
    idleMs: read("SVC_IDLE_TIMEOUT_MS"),
    bodyMinBytesPerSecond: read("SVC_BODY_MIN_BYTES_PER_SECOND"),
    bodyRateWindowMs: read("SVC_BODY_RATE_WINDOW_MS"),
  };

  const tenants = parseTenants(read, log);
  // Fatal, unlike a tenant's bad entry: the value is the tenant's and a service secret at once, so dropping the
  // tenant would leave it accepted on the system routes (or by the rendition service). The operator must tell them apart.
  const guarded = { SYSTEM_AUTH_TOKEN: "the system routes", RENDITION_SERVICE_TOKEN: "the rendition service" } as const;
  for (const variable of ["SYSTEM_AUTH_TOKEN", "RENDITION_SERVICE_TOKEN"] as const) {
    const secret = read(variable);
    const holder = secret === undefined ? undefined : [...tenants.values()].find((tenant) => tenant.token === secret);
    if (holder) fail(variable, `${variable} is tenant "${holder.appId}"'s token in SVC_APP_TOKENS: that tenant could call ${guarded[variable]}`);
  }
  let processing = parseProcessingConfig(read, log);
  warnEntriesOfNoTenant(tenants, processing, log);
  if (processing.tasks && systemAuthToken === undefined) {
    // Each task calls the worker route with it, which fails closed without it: stages would wait for a dispatch
    // that never succeeds. Off, they settle `skipped` (dispatch_off) when requested.
    log.error("the task queue needs SYSTEM_AUTH_TOKEN (the worker route's token); task dispatch is off", { variable: "SYSTEM_AUTH_TOKEN" });
    const { tasks: _unusable, ...rest } = processing;
    processing = rest;
  }
  const rendition = parseRenditionTarget(read, systemAuthToken, fail, log);

  const ffmpegPath = read("FFMPEG_PATH");
  const lambdaTaskRoot = read("LAMBDA_TASK_ROOT");
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    nodeEnv,
    production,
    logLevel,
    ...(database !== undefined && { database }),
    ...(blobs !== undefined && { blobs }),
    ...(publicBaseUrl !== undefined && { publicBaseUrl }),
    ...(pdsHost !== undefined && { pdsHost }),
    ...(playbackSigningKey !== undefined && { playbackSigningKey }),
    tenants,
    ...(systemAuthToken !== undefined && { systemAuthToken }),
    ...(rendition !== undefined && { rendition }),
    trustedProxyHops: read("TRUSTED_PROXY_HOPS"),
    storeJanitor: {
      intervalMs: read("SVC_STORE_JANITOR_INTERVAL_MS"),
      stagingMaxAgeMs: read("SVC_STAGING_MAX_AGE_MS"),
      orphanMinAgeMs: read("SVC_ORPHAN_MIN_AGE_MS"),
    },
    clientIpSource: read("CLIENT_IP_SOURCE"),
    listen: { host: read("HOST"), port: read("PORT") },
    rateLimits: {
      write: { actor: read("SVC_LIMIT_WRITES_PER_ACTOR"), "aggregate-ip": read("SVC_LIMIT_WRITES_PER_IP") },
      read: {
        actor: read("SVC_LIMIT_READS_PER_ACTOR"),
        tenant: read("SVC_LIMIT_READS_PER_TENANT"),
        ip: read("SVC_LIMIT_PLAYBACK_PER_IP"),
        "aggregate-ip": read("SVC_LIMIT_READS_PER_IP"),
      },
      upload: { actor: read("SVC_LIMIT_UPLOADS_PER_ACTOR"), "aggregate-ip": read("SVC_LIMIT_UPLOADS_PER_IP") },
    },
    aws: awsEnvironmentOf(read),
    ...(lambdaTaskRoot !== undefined && { lambdaTaskRoot }),
    ...(ffmpegPath !== undefined && { ffmpegPath }),
    sha: read("SVC_GIT_SHA") ?? null,
    deployedAt,
    processing,
    timeouts,
  };
}

/**
 * A value only functions of some scopes are configured with: the value, or a ConfigError naming its variable (a
 * function reached for something its scopes do not cover).
 */
export const configured = <T>(value: T | undefined, variable: string): T => {
  if (value === undefined) throw new ConfigError([{ variable, message: `${variable} is required` }]);
  return value;
};

/** DATABASE_URL alone, for processes that only touch the database (the deploy-time migration step). */
export function parseDatabaseConfig(env: NodeJS.ProcessEnv): DatabaseConfig {
  const problems: ConfigProblem[] = [];
  const fail = (variable: string, message: string) => {
    problems.push({ variable, message });
    return undefined;
  };
  const database = readVariables(env, fail, ["sql"])("DATABASE_URL");
  if (!database || problems.length > 0) throw new ConfigError(problems);
  return database;
}

/**
 * A service token is sent as `Authorization: Bearer <token>`, one word of printable ASCII: one with a space or any
 * other character could never be sent or matched, and its tenant would be refused forever with nothing to say why.
 */
const bearerTokenProblem = (token: string): string | undefined =>
  shortSecret("token")(token) ?? (/^[\x21-\x7e]+$/.test(token) ? undefined : "token must be printable ASCII without spaces");

function parseTenants(read: ReadVariable, log: ConfigLog): Map<string, Tenant> {
  const tokens = parseAppList("SVC_APP_TOKENS", read("SVC_APP_TOKENS"), bearerTokenProblem, log);
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
    read("SVC_APP_DIDS"),
    (did) => (isDidWeb(did) ? undefined : "not a valid did:web DID"),
    log,
  );
  // One DID for two tenants would put both tenants' posts in one repo, and one proof of custody would vouch for
  // both: the later tenant loses it, as with a token. Keyed by the document's URL, which is what custody proves
  // (`did:web:A.example.com` is `did:web:a.example.com`'s document).
  const didOwners = new Map<string, string>();
  for (const [appId, did] of dids) {
    const document = didWebDocumentUrl(did);
    const owner = didOwners.get(document);
    if (owner !== undefined) {
      log.error(`SVC_APP_DIDS: entry for tenant "${appId}" dropped: same DID as tenant "${owner}"`, { variable: "SVC_APP_DIDS", appId });
      dids.delete(appId);
    } else didOwners.set(document, appId);
  }

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
