import type { AddressInfo } from "node:net";
import path from "node:path";
import { loadConfigOrExit } from "../config/check-config";
import { loadEnvFile } from "../config/load-env-file";
import { createLogger } from "../observability/logger";
import { loadRouteImpls } from "./load-routes";
import { startEnrichmentWorkers } from "./enrichment-workers";
import { createNodeDeps } from "./node-deps";
import { createNodeHost } from "./node-host";
import { keepServing } from "./keep-serving";

/** `npm start`: local.env defaults (a variable already in the environment wins), then every route on PORT. */
loadEnvFile(path.resolve(import.meta.dirname, "../../local.env"));
const config = loadConfigOrExit();
const logger = createLogger(config.logLevel);
keepServing(logger);
const deps = await createNodeDeps(config, logger);
const server = createNodeHost(await loadRouteImpls(), deps);
const workers = startEnrichmentWorkers(deps);
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "127.0.0.1";
server.listen(port, host, () => {
  const { port: bound } = server.address() as AddressInfo;
  logger.info("listening", { url: `http://${host}:${bound}`, backend: deps.sql.kind });
});

const shutdown = () =>
  server.close(() => void workers.stop().then(() => deps.sql.close()).then(() => process.exit(0)));
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
