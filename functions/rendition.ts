import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { createS3BlobStore } from "../core/blobs/s3-blob-store";
import { processEnvironment } from "../core/config/environment";
import { createLogger } from "../core/observability/logger";
import { resolveFfmpegPath } from "../core/rendition/ffmpeg-path";
import { createLoudnessCache } from "../core/rendition/loudness-cache";
import { createRecentEntries } from "../core/rendition/recent-entries";
import { createPcmCache } from "../core/rendition/pcm-cache";
import { parseRenditionConfig } from "../core/rendition/rendition-config";
import { createRenditionService, type RenditionService } from "../core/rendition/rendition-service";
import { removeStaleWorkspaces } from "../core/rendition/temp-workspace";
import { loadSstConfig } from "../core/runtime/lambda/sst-config";

/**
 * The rendition service as a Lambda behind a function URL (payload 2.0): S3 only, ffmpeg from
 * `@ffmpeg-installer/linux-arm64` installed beside the bundle (or FFMPEG_PATH), writes only under the temp dir.
 * The service is built on the first invocation and reused while the container is warm (its PCM cache too).
 */
let service: RenditionService | undefined;

const renditionService = (): RenditionService => {
  if (service) return service;
  const config = parseRenditionConfig(processEnvironment(), createLogger("info"));
  if (config.blobs.kind !== "s3") throw new Error("the rendition Lambda uses S3: set SVC_BLOB_BUCKET, not SVC_BLOB_DIR");
  const logger = createLogger(config.logLevel);
  service = createRenditionService({
    context: { store: createS3BlobStore({ bucket: config.blobs.bucket }), ffmpeg: resolveFfmpegPath(config.ffmpegPath), pcm: createPcmCache(), loudness: createLoudnessCache(), renditions: createRecentEntries() },
    token: config.token,
    logger,
  });
  return service;
};

// Once per container, before its first operation: the workspaces in /tmp of a run cut off mid-operation (its
// timeout, out of memory) in this environment before are removed.
let cleaned: Promise<unknown> | undefined;

// The token arrives as an SST Config secret: fetched from SSM once per container, again after a failed fetch.
let configured: Promise<void> | undefined;
const loadConfig = () => (configured ??= loadSstConfig(processEnvironment()).catch((error) => ((configured = undefined), Promise.reject(error))));

export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
  let serve: RenditionService;
  try {
    await loadConfig();
    serve = renditionService();
    await (cleaned ??= removeStaleWorkspaces(createLogger("info")).catch(() => 0));
  } catch (error) {
    return couldNotStart(error);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value;
  const body = event.body === undefined ? "" : event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  const response = await serve({ method: event.requestContext.http.method, path: event.rawPath, headers, body });
  return { statusCode: response.status, headers: response.headers, body: response.body };
};

/** Thrown out of the handler, a start failure would reach the caller as the function URL's bare 502, not the envelope. */
const couldNotStart = (error: unknown): APIGatewayProxyStructuredResultV2 => {
  const requestId = randomUUID();
  createLogger("error").error("the rendition function could not start; its next call tries again", { requestId }, error instanceof Error ? error : new Error(String(error)));
  const body = { success: false, error: { code: "SERVICE_UNAVAILABLE", message: "the rendition service could not start; retry later" }, requestId };
  return { statusCode: 503, headers: { "Content-Type": "application/json; charset=utf-8", "X-Request-ID": requestId }, body: JSON.stringify(body) };
};
