/**
 * The rendition service's own configuration: it needs the shared blob store and its bearer token, nothing of the
 * main service (no database, no tenants). Empty values count as unset.
 */
import type { BlobConfig, LogLevel } from "../config/types";

export interface RenditionConfig {
  blobs: BlobConfig;
  /** RENDITION_SERVICE_TOKEN, else SYSTEM_AUTH_TOKEN; unset makes every route answer 503. */
  token?: string;
  port: number;
  logLevel: LogLevel;
}

const minTokenLength = 32;
const logLevels: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

export class RenditionConfigError extends Error {}

export function parseRenditionConfig(env: NodeJS.ProcessEnv, log: { error(message: string, ...extra: Record<string, unknown>[]): void }): RenditionConfig {
  const read = (name: string) => env[name]?.trim() || undefined;
  const blobDir = read("SVC_BLOB_DIR");
  const bucket = read("SVC_BLOB_BUCKET");
  const blobs: BlobConfig | undefined = blobDir ? { kind: "fs", dir: blobDir } : bucket ? { kind: "s3", bucket } : undefined;
  if (!blobs) throw new RenditionConfigError("SVC_BLOB_DIR or SVC_BLOB_BUCKET is required: the rendition service shares the service's blob store");

  const tokenVariable = read("RENDITION_SERVICE_TOKEN") ? "RENDITION_SERVICE_TOKEN" : "SYSTEM_AUTH_TOKEN";
  let token = read(tokenVariable);
  if (token !== undefined && token.length < minTokenLength) {
    // Never the value itself: it is a secret, however short.
    log.error(`${tokenVariable} is shorter than ${minTokenLength} characters and is ignored; the rendition service answers 503`, {
      variable: tokenVariable,
    });
    token = undefined;
  }

  const rawPort = read("RENDITION_PORT") ?? "3001";
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port > 65535) throw new RenditionConfigError("RENDITION_PORT must be a port number");

  const production = read("NODE_ENV") === "production";
  const rawLevel = read("LOG_LEVEL");
  if (rawLevel !== undefined && !(logLevels as readonly string[]).includes(rawLevel)) {
    throw new RenditionConfigError(`LOG_LEVEL must be one of ${logLevels.join(", ")}`);
  }
  const logLevel = (rawLevel as LogLevel | undefined) ?? (production ? "info" : "debug");
  return { blobs, ...(token !== undefined && { token }), port, logLevel };
}
