/** `npm run rendition`: local.env defaults (the environment wins), then the rendition service on RENDITION_PORT. */
import { parsedOrExit, stderrLog } from "../config/check-config";
import { localEnvironment } from "../config/environment";
import { createLogger } from "../observability/logger";
import { parseRenditionConfig } from "./rendition-config";
import { startRendition } from "./rendition-node-root";

const config = parsedOrExit(() => parseRenditionConfig(localEnvironment(), stderrLog));
const logger = createLogger(config.logLevel);
const running = await startRendition(config, logger, { host: config.host });
logger.info("rendition service listening", { url: running.url, blobs: config.blobs.kind, token: config.token ? "set" : "unset" });

const shutdown = () => void running.close().then(() => process.exit(0));
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
