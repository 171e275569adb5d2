import type { AddressInfo } from "node:net";
import { loadConfigOrExit } from "../../config/check-config";
import { localEnvironment } from "../../config/environment";
import { createLogger } from "../../observability/logger";
import { ensurePgliteDataDir, pgliteSettings } from "../../sql/pglite-data-dir";
import { inheritedListener } from "./inherited-listener";
import { keepServing } from "./keep-serving";

/** `npm start`: local.env defaults (a variable already in the environment wins), then every route on PORT. */
const config = loadConfigOrExit(localEnvironment());
const logger = createLogger(config.logLevel, { plainInfo: true });

// Until the server listens, any failure is the start's (a database down, a port in use, a HOST not on this machine):
// logged once and exit 1, so a supervisor sees it and restarts. keepServing takes over only once there is something
// to keep serving; installed earlier, it turned these into an exit 0, or a process that polls the queue unreachable.
const startFailed = (error: unknown): never => {
  logger.error("start-up failed", error instanceof Error ? error : new Error(String(error)));
  process.exit(1);
};
process.on("uncaughtException", startFailed);
process.on("unhandledRejection", startFailed);

async function start() {
  // A first start on PGlite runs initdb in a child process (core/sql/pglite-data-dir.ts) whose memory adds to this
  // one's: it runs before the rest of the server is loaded, which keeps about 80 MB out of that peak.
  const database = config.database; // the Node host parses every scope: always set
  if (database?.kind === "pglite" && database.dir !== "memory") {
    const created = await ensurePgliteDataDir(database.dir, pgliteSettings);
    if (created) logger.info("created the PGlite data directory", { dir: database.dir, ...created });
  }

  const [{ loadRouteImpls }, { startEnrichmentWorkers }, { createNodeDeps }, { createNodeHost }, { startStoreJanitor }, { removeStaleWorkspaces }] = await Promise.all([
    import("./load-routes"),
    import("./enrichment-workers"),
    import("./node-deps"),
    import("./node-host"),
    import("./store-janitor-timer"),
    import("../../rendition/temp-workspace"),
  ]);
  // Before any pass runs: a host killed mid-operation (a local re-encode for a provider) left its workspace behind.
  await removeStaleWorkspaces(logger);
  const deps = await createNodeDeps(config, logger);
  const server = createNodeHost(await loadRouteImpls(), deps);
  const workers = startEnrichmentWorkers(deps);
  const janitor = startStoreJanitor(deps);
  const { host, port } = config.listen;
  const listener = await inheritedListener();
  // The 'error' event before 'listening' (EADDRINUSE, EADDRNOTAVAIL, ENOTFOUND) fails the start.
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const listening = () => (server.off("error", reject), resolve());
    if (listener) server.listen(listener, listening);
    else server.listen(port, host, listening);
  });
  const { address, port: bound } = server.address() as AddressInfo;
  logger.info("listening", { url: `http://${listener ? address : host}:${bound}`, backend: deps.sql.kind });
  return { server, deps, workers, janitor };
}

const { server, deps, workers, janitor } = await start().catch(startFailed);
process.off("uncaughtException", startFailed);
process.off("unhandledRejection", startFailed);
keepServing(logger);

// Requests still being answered finish first (node-host.ts), then the workers stop and the database closes.
const shutdown = (signal: NodeJS.Signals) => {
  logger.info("shutting down", { signal });
  void server
    .shutDown()
    .then(() => Promise.all([workers.stop(), janitor.stop()]))
    .then(() => deps.sql.close())
    .then(() => process.exit(0));
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
