import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "../../core/sql/migrate";
import { openPglite } from "../../core/sql/pglite";
import { openPostgres } from "../../core/sql/postgres";
import type { SqlBackend } from "../../core/sql/port";
import { pgliteTemplate } from "./pglite-templates";
import { migrationsDir } from "./repo-paths";

/**
 * The SQL backends every SQL suite runs on: PGlite always, Postgres when TEST_DATABASE_URL is set.
 * Usage: `describe.each(backends)("... on $name", ({ open }) => { ... })`. Each `open()` is a fresh, empty
 * database of its own (for Postgres a new `svc_t_<random>` database, dropped on close).
 */
export type TestDatabase = SqlBackend & { url?: string };

export interface DatabaseBackend {
  name: "pglite" | "postgres";
  open(): Promise<TestDatabase>;
}

export { migrationsDir, repoRoot } from "./repo-paths";

export const freshDatabase = async (name: DatabaseBackend["name"]): Promise<TestDatabase> => {
  if (name === "pglite") return openPglite("memory", { loadDataDir: await pgliteTemplate("empty") });
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error("TEST_DATABASE_URL is not set");
  const database = `svc_t_${randomBytes(6).toString("hex")}`;
  await withAdmin(base, (admin) => admin.query(`CREATE DATABASE ${database}`));
  const url = new URL(base);
  url.pathname = `/${database}`;
  const sql = await openPostgres(url.toString());
  return {
    ...sql,
    url: url.toString(),
    async close() {
      await sql.close();
      await withAdmin(base, (admin) => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    },
  };
};

export const backends: DatabaseBackend[] = [
  { name: "pglite", open: () => freshDatabase("pglite") },
  ...(process.env.TEST_DATABASE_URL ? [{ name: "postgres" as const, open: () => freshDatabase("postgres") }] : []),
];

/** A fresh database of that backend with the project's migrations applied. */
export const migratedDatabase = async (backend: { name: string; open(): Promise<TestDatabase> }): Promise<TestDatabase> => {
  if (backend.name === "pglite") {
    return openPglite("memory", { loadDataDir: await pgliteTemplate("migrated") });
  }
  const db = await backend.open();
  try {
    await migrate(db, migrationsDir);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
};

/**
 * The Data API adapter against the emulator (see data-api-emulator.ts), in front of PGlite over pglite-socket and,
 * when TEST_DATABASE_URL is set, in front of a fresh Postgres database too. Loaded lazily: only suites that ask
 * for it pay for it.
 */
export interface DataApiBackend {
  name: "rds-data on pglite" | "rds-data on postgres";
  open(): Promise<TestDatabase>;
}

const openDataApi = async (over: "pglite" | "postgres"): Promise<TestDatabase> => {
  const [{ startDataApiEmulator }, { openRdsData }, { RDSDataClient }] = await Promise.all([
    import("./data-api-emulator"),
    import("../../core/sql/rds-data"),
    import("@aws-sdk/client-rds-data"),
  ]);
  const postgres = over === "postgres" ? await freshDatabase("postgres") : undefined;
  const emulator = await startDataApiEmulator(
    postgres?.url ? { postgresUrl: postgres.url } : { loadDataDir: await pgliteTemplate("empty") },
  );
  const client = new RDSDataClient({
    endpoint: emulator.endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const sql = openRdsData({ ...emulator, client });
  return {
    ...sql,
    async close() {
      client.destroy();
      await emulator.stop();
      await postgres?.close();
    },
  };
};

export const dataApiBackends: DataApiBackend[] = [
  { name: "rds-data on pglite", open: () => openDataApi("pglite") },
  ...(process.env.TEST_DATABASE_URL
    ? [{ name: "rds-data on postgres" as const, open: () => openDataApi("postgres") }]
    : []),
];

const withAdmin = async <T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};
