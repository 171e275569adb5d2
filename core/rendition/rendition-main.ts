/** `npm run rendition`: local.env defaults (the environment wins), then the rendition service on RENDITION_PORT. */
import path from "node:path";
import { loadEnvFile } from "../config/load-env-file";
import { createLogger } from "../observability/logger";
import { parseRenditionConfig, type RenditionConfig, RenditionConfigError } from "./rendition-config";
import { startRendition } from "./rendition-node-root";

loadEnvFile(path.resolve(import.meta.dirname, "../../local.env"));
const bootLogger = createLogger("info");
let config: RenditionConfig;
try {
  config = parseRenditionConfig(process.env, bootLogger);
} catch (error) {
  if (!(error instanceof RenditionConfigError)) throw error;
  bootLogger.error(error.message);
  process.exit(1);
}
const logger = createLogger(config.logLevel);
const running = await startRendition(config, logger, { host: process.env.HOST?.trim() || "127.0.0.1" });
logger.info("rendition service listening", { url: running.url, blobs: config.blobs.kind, token: config.token ? "set" : "unset" });

const shutdown = () => void running.close().then(() => process.exit(0));
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
