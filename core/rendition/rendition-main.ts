/** `npm run rendition`: local.env defaults (the environment wins), then the rendition service on RENDITION_PORT. */
import { parsedOrExit, stderrLog } from "../config/check-config";
import { localEnvironment } from "../config/environment";
import { createLogger } from "../observability/logger";
import { keepServing } from "../runtime/node/keep-serving";
import { parseRenditionConfig } from "./rendition-config";
import { startRendition } from "./rendition-node-root";

const config = parsedOrExit(() => parseRenditionConfig(localEnvironment(), stderrLog));
const logger = createLogger(config.logLevel);
// As the API host does: one request's failure never ends the process serving every other.
keepServing(logger);
const running = await startRendition(config, logger, { host: config.host });
logger.info("rendition service listening", { url: running.url, blobs: config.blobs.kind, token: config.token ? "set" : "unset" });

const shutdown = () => void running.close().then(() => process.exit(0));
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
