import type { AddressInfo } from "node:net";
import type { Server as HttpServer } from "node:http";
import { createRequire, Module } from "node:module";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import pg from "pg";
import { parseTimestamp } from "../../core/sql/parse-timestamp";

/**
 * `data-api-local` (an RDS Data API emulator) in front of PGlite served over `@electric-sql/pglite-socket`, or in
 * front of a real Postgres when `postgresUrl` is given, on loopback ephemeral ports.
 *
 * data-api-local 1.0.0-alpha.2 ships pg 7, which never finishes connecting on Node >= 14, so its `require("pg")` is
 * pointed at the project's pg 8 through a thin client that also corrects where the emulator departs from AWS:
 * bigint longValues, base64 blobValues both ways, JSON text, millisecond timestamps, and `;` inside function bodies.
 * It also refuses what AWS refuses and the emulator would answer (a row over 64 KB, more than 1 MiB of rows in one
 * result) and takes what AWS takes and the emulator would refuse (a request up to 4 MiB, not 100 KB). What it still lacks (DatabaseResumingException, SQLSTATE) is covered by stub-client tests.
 */
export interface DataApiEmulator {
  endpoint: string;
  resourceArn: string;
  secretArn: string;
  database: string;
  stop(): Promise<void>;
}

interface EmulatorServer {
  port: number;
  httpServer: HttpServer;
  pool: Record<string, { disconnect(): Promise<void> }>;
  start(): Promise<unknown>;
  stop(): Promise<void>;
}
type EmulatorServerClass = new (options: {
  logger?: (message: string) => void;
  server: { hostname: string; port: number };
  database: Record<string, unknown> & { engine: "postgresql" };
}) => EmulatorServer;

const require = createRequire(import.meta.url);

export const startDataApiEmulator = async (
  options: { postgresUrl?: string; loadDataDir?: Blob } = {},
): Promise<DataApiEmulator> => {
  const Server = loadEmulator();
  let database: string;
  let connection: Record<string, unknown>;
  let stopBackend: () => Promise<void>;

  if (options.postgresUrl) {
    const url = new URL(options.postgresUrl);
    database = decodeURIComponent(url.pathname.slice(1));
    connection = {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username || "postgres"),
      password: decodeURIComponent(url.password),
      options: "-c TimeZone=UTC",
      [POOLED]: true,
    };
    const pooled = { ...connection, database } as pg.ClientConfig;
    stopBackend = () => endPool(pooled);
  } else {
    const db = await PGlite.create(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {});
    // data-api-local opens a connection per call and holds one per open transaction.
    const socket = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 100 });
    await socket.start();
    database = "postgres";
    connection = { host: "127.0.0.1", port: Number(socket.getServerConn().split(":").pop()), user: "postgres", password: "postgres" };
    stopBackend = async () => {
      await socket.stop();
      await db.close();
    };
  }

  const server = new Server({
    logger: () => {},
    server: { hostname: "127.0.0.1", port: 0 },
    database: { engine: "postgresql", database, ...connection },
  });
  server.port = 0; // its constructor turns 0 into 8080
  await server.start();
  const { port } = server.httpServer.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    resourceArn: "arn:aws:rds:us-east-1:000000000000:cluster:svc-local",
    secretArn: "arn:aws:secretsmanager:us-east-1:000000000000:secret:svc-local",
    database,
    async stop() {
      await Promise.all(Object.values(server.pool).map((client) => client.disconnect().catch(() => {})));
      server.httpServer.closeAllConnections();
      await server.stop();
      await stopBackend();
    },
  };
};

let emulator: EmulatorServerClass | undefined;
const SEMICOLON = "\u{F0000}";
const PATCHED = Symbol.for("svc.test.data-api-local.patched");

const loadEmulator = (): EmulatorServerClass => {
  if (emulator) return emulator;
  const emulatorRequire = createRequire(require.resolve("data-api-local"));
  const pgPath = emulatorRequire.resolve("pg");
  const shim = new Module(pgPath) as Module & { loaded: boolean };
  shim.filename = pgPath;
  shim.exports = Object.assign(Object.create(pg), { Client: EmulatorPgClient });
  shim.loaded = true;
  require.cache[pgPath] = shim;

  // It keeps only the text before the first `;`, cutting plpgsql bodies short; hide `;` from that split.
  const transform = emulatorRequire("./utils/transformQuery") as {
    transformQuery: (sql: string, parameters?: unknown[]) => { query: string; values?: unknown[] };
    [PATCHED]?: true;
  };
  // Node's require cache outlives a test file's module graph: patch once per process.
  if (!transform[PATCHED]) {
    const original = transform.transformQuery;
    transform.transformQuery = (sql, parameters) => {
      const result = original(sql.replaceAll(";", SEMICOLON), parameters);
      return { ...result, query: result.query.replaceAll(SEMICOLON, ";") };
    };
    transform[PATCHED] = true;
  }

  // AWS takes requests up to 4 MiB (a long waveform is written as one parameter); body-parser's default is 100 KB.
  const bodyParser = emulatorRequire("body-parser") as { json: (options?: object) => unknown; [PATCHED]?: true };
  if (!bodyParser[PATCHED]) {
    const json = bodyParser.json;
    Object.defineProperty(bodyParser, "json", { value: (options?: object) => json({ limit: "4mb", ...options }) });
    bodyParser[PATCHED] = true;
  }

  emulator = (emulatorRequire("./Server") as { Server: EmulatorServerClass }).Server;
  return emulator;
};

const { builtins } = pg.types;

// Results shaped like the real Data API's: JSON as its text, bytea as base64, timestamps to the millisecond.
const emulatorParsers: Record<number, (text: string) => unknown> = {
  [builtins.JSON]: (text) => text,
  [builtins.JSONB]: (text) => text,
  [builtins.DATE]: (text) => text,
  [builtins.BYTEA]: (text) => Buffer.from(text.replace(/^\\x/, ""), "hex").toString("base64"),
  [builtins.TIMESTAMP]: (text) => parseTimestamp(text).toISOString(),
  [builtins.TIMESTAMPTZ]: (text) => parseTimestamp(text).toISOString(),
};
const emulatorTypes = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    (format ?? "text") === "text" && emulatorParsers[oid] ? emulatorParsers[oid] : pg.types.getTypeParser(oid, format),
} as unknown as pg.CustomTypesConfig;

/** The Data API's limits on what the database returns: 64 KB a row, 1 MiB a result (data-api.limitations). */
export const dataApiRowLimit = 64 * 1024;
export const dataApiResultLimit = 1024 * 1024;

/** A value's size as the database returns it (bytea arrives here as base64 and is counted as its bytes). */
const valueBytes = (value: unknown, dataTypeID: number): number => {
  if (value === null || value === undefined) return 0;
  if (typeof value === "string") return dataTypeID === builtins.BYTEA ? Math.floor((value.length * 3) / 4) : Buffer.byteLength(value);
  if (typeof value === "number" || typeof value === "boolean") return 8;
  return Buffer.byteLength(JSON.stringify(value));
};

/**
 * Result types the Data API refuses on Aurora PostgreSQL (data-api.differences: "UnsupportedResultException: The
 * result contains the unsupported data type"; its list of supported scalar types names none of these): void (a
 * bare `SELECT pg_advisory_xact_lock(...)`), interval, timetz, regclass and "char".
 */
const unsupportedResultTypes = new Map<number, string>([
  [2278, "void"],
  [builtins.INTERVAL, "interval"],
  [builtins.TIMETZ, "timetz"],
  [builtins.REGCLASS, "regclass"],
  [builtins.CHAR, "\"char\""],
]);

/** Throws as the Data API answers a result past its limits (the emulator turns it into a 400 with this message). */
const enforceDataApiLimits = (result: pg.QueryResult<unknown[]>) => {
  for (const field of result.fields ?? []) {
    const unsupported = unsupportedResultTypes.get(field.dataTypeID);
    if (unsupported) throw new Error(`UnsupportedResultException: The result contains the unsupported data type ${unsupported}`);
  }
  let total = 0;
  for (const row of result.rows ?? []) {
    if (!Array.isArray(row)) continue;
    const bytes = row.reduce<number>((sum, value, i) => sum + valueBytes(value, result.fields[i]?.dataTypeID ?? 0), 0);
    if (bytes > dataApiRowLimit) throw new Error(`Packet for query is too large: a row of ${bytes} bytes (64 KB per row)`);
    total += bytes;
  }
  if (total > dataApiResultLimit) throw new Error(`Database returned more than the allowed response size limit (${total} bytes)`);
};

/**
 * Marks a Postgres connection config: its connections are pooled. data-api-local connects afresh for every call,
 * about 25 ms a time against a real server (a backend process forked each time), which dominated the suites on
 * Postgres; the real Data API keeps a pool too. PGlite's socket connects for nothing and is left unpooled.
 */
const POOLED = Symbol("svc.test.data-api-local.pooled");
const pools = new Map<string, pg.Pool>();
const poolKey = (config: pg.ClientConfig) => `${config.host}:${config.port}/${config.database}`;
const poolFor = (config: pg.ClientConfig): pg.Pool => {
  let pool = pools.get(poolKey(config));
  if (!pool) {
    pool = new pg.Pool({ ...config, types: emulatorTypes, max: 100, idleTimeoutMillis: 5_000, allowExitOnIdle: true });
    // A suite dropping its database (DROP DATABASE ... WITH (FORCE), 57P01) ends idle connections: not a failure.
    pool.on("error", () => {});
    pools.set(poolKey(config), pool);
  }
  return pool;
};
const endPool = async (config: pg.ClientConfig) => {
  const pool = pools.get(poolKey(config));
  pools.delete(poolKey(config));
  await pool?.end().catch(() => {});
};

/** The statement as the Data API would run it: corrections on the way in, its limits on the way out. */
const dataApiQuery = (client: pg.ClientBase, args: unknown[]): unknown => {
  const [config] = args;
  if (config && typeof config === "object" && typeof (config as pg.QueryConfig).text === "string") {
    const { text, values } = config as pg.QueryConfig;
    const blobs = new Set([...text.matchAll(/\$(\d+)::bytea\b/g)].map((m) => Number(m[1]) - 1));
    args[0] = {
      ...config,
      // The Data API binds a longValue as bigint; the emulator casts it to int (int4).
      text: text.replace(/(\$\d+)::int\b/g, "$1::int8"),
      // blobValue arrives base64-encoded; the emulator would store the base64 text itself.
      values: values?.map((v, i) => (blobs.has(i) && typeof v === "string" ? Buffer.from(v, "base64") : v)),
    };
  }
  const answer = (client.query as (...a: unknown[]) => unknown).apply(client, args);
  if (answer instanceof Promise) return answer.then((result: pg.QueryResult<unknown[]>) => (enforceDataApiLimits(result), result));
  return answer;
};

/** What data-api-local takes for pg's Client: connect, query, end. */
class EmulatorPgClient {
  private client?: pg.ClientBase & { release?: (destroy?: boolean) => void };
  private inTransaction = false;

  constructor(private readonly config: pg.ClientConfig & { [POOLED]?: true }) {}

  async connect(): Promise<void> {
    if (this.config[POOLED]) {
      this.client = await poolFor(this.config).connect();
      return;
    }
    const client = new pg.Client({ ...this.config, types: emulatorTypes });
    // data-api-local listens for no connection error: a connection still open when a suite drops its database
    // (DROP DATABASE ... WITH (FORCE) ends it with 57P01) would be an uncaught exception in the test process.
    client.on("error", () => {});
    await client.connect();
    this.client = client;
  }

  query(...args: unknown[]): never {
    if (!this.client) throw new Error("not connected");
    const text = typeof args[0] === "string" ? args[0] : (args[0] as pg.QueryConfig | undefined)?.text;
    if (typeof text === "string") {
      if (/^\s*(BEGIN|START TRANSACTION)\b/i.test(text)) this.inTransaction = true;
      else if (/^\s*(COMMIT|ROLLBACK|END)\b/i.test(text)) this.inTransaction = false;
    }
    return dataApiQuery(this.client, args) as never;
  }

  async end(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // A connection left inside a transaction is never handed to another call.
    if (client.release) client.release(this.inTransaction);
    else await (client as pg.Client).end();
  }
}
