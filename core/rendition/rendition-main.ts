/** `npm run rendition`: local.env defaults (the environment wins), then the rendition service on RENDITION_PORT. */
import { parsedOrExit, stderrLog } from "../config/check-config";
import { localEnvironment } from "../config/environment";
import { createLogger } from "../observability/logger";
import { keepServing } from "../runtime/node/keep-serving";
import { parseRenditionConfig } from "./rendition-config";
import { startRendition } from "./rendition-node-root";

const config = parsedOrExit(() => parseRenditionConfig(localEnvironment(), stderrLog));
const logger = createLogger(config.logLevel);
// Until it listens, a failure is the start's (a port in use, a HOST not on this machine: the server's 'error' event,
// thrown with no listener for it): logged once and exit 1, as the API host does, never an exit 0 or a process that
// serves nothing.
const startFailed = (error: unknown): never => {
  logger.error("start-up failed", error instanceof Error ? error : new Error(String(error)));
  process.exit(1);
};
process.on("uncaughtException", startFailed);
process.on("unhandledRejection", startFailed);
const running = await startRendition(config, logger, { host: config.host }).catch(startFailed);
process.off("uncaughtException", startFailed);
process.off("unhandledRejection", startFailed);
// As the API host does, once serving: one request's failure never ends the process serving every other.
keepServing(logger);
logger.info("rendition service listening", { url: running.url, blobs: config.blobs.kind, token: config.token ? "set" : "unset" });

const shutdown = () => void running.close().then(() => process.exit(0));
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
