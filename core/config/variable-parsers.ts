/** Parsers of single variables, for the rows of the variable table (`variables.ts`). */
import { isShortSecret, minSecretLength } from "./secret-length";
import { parseRateLimitPolicy, RateLimitPolicy } from "../rate-limit/policies";
import type { LogLevel } from "../observability/logger";
import type { DatabaseConfig } from "../sql/database-config";
import { maxModelLength } from "../records/transcript-record";

/** Records a problem with the variable and yields nothing; a parser returns it for a bad value. */
export type Fail = (variable: string, message: string) => undefined;

/** Turns one variable's trimmed, non-empty value into its typed value, or reports a problem through `fail`. */
export type VariableParser<T = unknown> = (value: string, fail: Fail, name: string) => T | undefined;


/** A transcription model's name: the transcript record keeps it, so it must fit the lexicon's field. */
export const modelName: VariableParser<string> = (value, fail, name) =>
  value.length > maxModelLength ? fail(name, `${name} must be at most ${maxModelLength} characters (the transcript record's model field)`) : value;

export const secret: VariableParser<string> = (value, fail, name) =>
  isShortSecret(value) ? fail(name, `${name} must be at least ${minSecretLength} characters`) : value;

export const nonNegativeInteger: VariableParser<number> = (value, fail, name) =>
  /^\d+$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : fail(name, `${name} must be a non-negative integer`);

/** 1 to 64: how many of something run at once. */
export const concurrency: VariableParser<number> = (value, fail, name) =>
  /^\d{1,2}$/.test(value) && Number(value) >= 1 && Number(value) <= 64 ? Number(value) : fail(name, `${name} must be a whole number from 1 to 64`);

export const milliseconds: VariableParser<number> = (value, fail, name) =>
  /^\d{1,7}$/.test(value) && Number(value) > 0 ? Number(value) : fail(name, `${name} must be a whole number of milliseconds from 1 to 9999999`);

/** Whole seconds from 1 to a year: periods too long for milliseconds (a day of webhook retries). */
export const seconds: VariableParser<number> = (value, fail, name) =>
  /^\d{1,8}$/.test(value) && Number(value) > 0 && Number(value) <= 31_536_000 ? Number(value) : fail(name, `${name} must be a whole number of seconds from 1 to 31536000`);

export const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

export const logLevel: VariableParser<LogLevel> = (value, fail, name) =>
  (logLevels as readonly string[]).includes(value) ? (value as LogLevel) : fail(name, `${name} must be one of ${logLevels.join(", ")}`);

/** The one platform transcriber there is; any other spelling would fall through to the external provider unseen. */
export const platformTranscriber: VariableParser<"aws-transcribe"> = (value, fail, name) =>
  value === "aws-transcribe" ? value : fail(name, `${name} must be aws-transcribe`);

export const clientIpSource: VariableParser<"forwarded" | "edge"> = (value, fail, name) =>
  value === "forwarded" || value === "edge" ? value : fail(name, `${name} must be forwarded or edge`);

export function parseDatabaseUrl(value: string, fail: Fail): DatabaseConfig | undefined {
  const name = "DATABASE_URL";
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
    let database: string;
    try {
      database = decodeURIComponent(url.hostname);
    } catch {
      return fail(name, `${name} rds-data:// database name is not percent-encoded correctly`);
    }
    const resourceArn = url.searchParams.get("resourceArn")?.trim();
    const secretArn = url.searchParams.get("secretArn")?.trim();
    const region = url.searchParams.get("region")?.trim();
    if (!database) return fail(name, `${name} rds-data:// needs a database name`);
    if (!resourceArn || !secretArn) return fail(name, `${name} rds-data:// needs resourceArn and secretArn`);
    return { kind: "rds-data", database, resourceArn, secretArn, ...(region && { region }) };
  }
  return fail(name, `${name} must start with pglite://, postgres://, postgresql:// or rds-data://`);
}

export function parsePublicBaseUrl(value: string, fail: Fail): string | undefined {
  const name = "SVC_PUBLIC_BASE_URL";
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

export function parsePdsHost(value: string, fail: Fail): string | undefined {
  const name = "SVC_PDS_HOST";
  const invalid = () => fail(name, `${name} must be a host or host:port, with no scheme or path`);
  if (/[/?#@\\\s]/.test(value)) return invalid();
  let url: URL;
  try {
    url = new URL(`http://${value}`);
    if (!url.hostname) return invalid();
  } catch {
    return invalid();
  }
  // Canonical as custody compares endpoints (url.hostname: lowercase, an IDN in punycode). A port written stays, even
  // http's 80 that url.host would drop: with no port, any port matches (core/tenancy/custody-document.ts).
  const port = /:(\d+)$/.exec(value)?.[1];
  return port === undefined ? url.hostname : `${url.hostname}:${Number(port)}`;
}


export const port: VariableParser<number> = (value, fail, name) =>
  /^\d{1,5}$/.test(value) && Number(value) <= 65535 ? Number(value) : fail(name, `${name} must be a TCP port number from 0 to 65535`);

/** One rate limit, `<count>/<window>` (core/rate-limit/policies.ts); the message says what is wrong with it. */
export const rateLimitPolicy: VariableParser<RateLimitPolicy> = (value, fail, name) => {
  const parsed = parseRateLimitPolicy(value);
  return parsed instanceof RateLimitPolicy ? parsed : fail(name, `${name} ${parsed.error}`);
};
