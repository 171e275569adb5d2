/**
 * The rendition service's own configuration, read through the variable table like the service's: it needs the
 * shared blob store and its bearer token, nothing of the main service (no database, no tenants).
 */
import { ConfigError, type ConfigProblem } from "../config/config-error";
import { readVariables } from "../config/read-variables";
import { renditionServiceToken } from "../config/rendition-target";
import { isShortSecret, minSecretLength } from "../config/secret-length";
import type { BlobConfig, LogLevel } from "../config/types";
import type { Logger } from "../observability/logger";

export interface RenditionConfig {
  blobs: BlobConfig;
  /** RENDITION_SERVICE_TOKEN (at least 32 characters), else SYSTEM_AUTH_TOKEN; unset makes every route answer 503. */
  token?: string;
  host: string;
  port: number;
  logLevel: LogLevel;
  /** FFMPEG_PATH; unset, the static build from `@ffmpeg-installer` (ffmpeg-path.ts). */
  ffmpegPath?: string;
}

/** Throws a ConfigError naming every bad variable. */
export function parseRenditionConfig(env: NodeJS.ProcessEnv, log: Pick<Logger, "error">): RenditionConfig {
  const problems: ConfigProblem[] = [];
  const fail = (variable: string, message: string) => void problems.push({ variable, message }) as undefined;
  const read = readVariables(env, fail, ["rendition-service"]);
  const blobDir = read("SVC_BLOB_DIR");
  const bucket = read("SVC_BLOB_BUCKET");
  const blobs: BlobConfig | undefined = blobDir ? { kind: "fs", dir: blobDir } : bucket ? { kind: "s3", bucket } : undefined;
  if (!blobs) fail("SVC_BLOB_DIR", "SVC_BLOB_DIR or SVC_BLOB_BUCKET is required: the rendition service shares the service's blob store");

  // Chosen as the service chooses the token it sends: a short RENDITION_SERVICE_TOKEN gives way to SYSTEM_AUTH_TOKEN.
  let token = renditionServiceToken(read("RENDITION_SERVICE_TOKEN"), read("SYSTEM_AUTH_TOKEN"), log);
  if (token !== undefined && isShortSecret(token)) {
    // Only SYSTEM_AUTH_TOKEN can be short here (the service then does not call at all). Never the value: a secret.
    log.error(`SYSTEM_AUTH_TOKEN is shorter than ${minSecretLength} characters and is ignored; the rendition service answers 503`, {
      variable: "SYSTEM_AUTH_TOKEN",
    });
    token = undefined;
  }
  if (problems.length > 0 || !blobs) throw new ConfigError(problems);
  const ffmpegPath = read("FFMPEG_PATH");
  return {
    blobs,
    ...(token !== undefined && { token }),
    host: read("HOST"),
    port: read("RENDITION_PORT"),
    logLevel: read("LOG_LEVEL") ?? (read("NODE_ENV") === "production" ? "info" : "debug"),
    ...(ffmpegPath !== undefined && { ffmpegPath }),
  };
}
