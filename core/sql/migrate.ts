import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { Sql } from "./port";
import { splitStatements } from "./split-statements";

export { splitStatements } from "./split-statements";

const FILE_NAME = /^\d{4}_[A-Za-z0-9_-]+\.sql$/;
// One lock for all migrators of a database, whichever process they run in.
const LOCK_KEY = 7_302_116_853;

/** A migration as the runner applies it: its file name (`NNNN_name.sql`) and its SQL text. */
export interface MigrationFile {
  name: string;
  sql: string;
}

/** Reads the `.sql` files of a directory (the Node host); Lambda bundles carry theirs (`bundled-migrations.ts`). */
export const readMigrations = async (dir: string): Promise<MigrationFile[]> => {
  const names = (await readdir(dir)).filter((f) => f.endsWith(".sql"));
  return Promise.all(names.map(async (name) => ({ name, sql: await readFile(path.join(dir, name), "utf8") })));
};

/**
 * Applies the migrations (a directory of `NNNN_name.sql` files, or the files themselves) not yet recorded in
 * schema_migrations, in name order. Each runs,
 * statement by statement (the Data API takes one per call), in its own transaction together with its record,
 * so a failure leaves neither its changes nor its record. Concurrent migrators serialise on an advisory lock
 * and re-check the record under it, so no migration is ever applied twice.
 */
export const migrate = async (sql: Sql, source: string | readonly MigrationFile[]): Promise<{ applied: string[] }> => {
  const files = [...(typeof source === "string" ? await readMigrations(source) : source)].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  const misnamed = files.map((f) => f.name).filter((f) => !FILE_NAME.test(f));
  if (misnamed.length) throw new Error(`Migration files must be named NNNN_name.sql: ${misnamed.join(", ")}`);

  const recorded = new Set(await appliedNames(sql));
  const applied: string[] = [];
  for (const { name, sql: text } of files.filter((f) => !recorded.has(f.name))) {
    const statements = splitStatements(text);
    const ran = await sql
      .transaction(async (tx) => {
        await lockMigrations(tx);
        const done = await tx.query("SELECT 1 FROM schema_migrations WHERE name = $1", [name]);
        if (done.length) return false;
        for (const statement of statements) await tx.query(statement);
        await tx.query("INSERT INTO schema_migrations (name) VALUES ($1)", [name]);
        return true;
      })
      .catch((error: unknown) => {
        throw new Error(`Migration ${name} failed: ${(error as Error)?.message ?? error}`, { cause: error });
      });
    if (ran) applied.push(name);
  }
  return { applied };
};

/**
 * Takes the migrators' lock for the transaction, with no statement or lock timeout for the rest of it: the pool's
 * statement timeout (SVC_DB_STATEMENT_TIMEOUT_MS) is for requests, and would fail a migration statement longer than
 * it. SET LOCAL ends with the transaction. The lock is polled rather than waited for in one statement, which the pg
 * client would give up on a second past that timeout while another host's migration runs longer.
 */
const lockMigrations = async (tx: Sql) => {
  await tx.query("SET LOCAL statement_timeout = 0");
  await tx.query("SET LOCAL lock_timeout = 0");
  const take = async () => (await tx.query<{ got: boolean }>(`SELECT pg_try_advisory_xact_lock(${LOCK_KEY}) AS got`))[0]?.got;
  // Only an answer of false means another holds it (a stand-in database that answers no rows is not kept waiting).
  while ((await take()) === false) await new Promise((resolve) => setTimeout(resolve, lockPollMs));
};
// Short beside a migration, and far below the idle-in-transaction timeout (three statement timeouts) between polls.
const lockPollMs = 200;

/** One statement when the table exists (the usual start); creates it under the lock the first time. */
const appliedNames = async (sql: Sql): Promise<string[]> => {
  const read = async () => (await sql.query<{ name: string }>("SELECT name FROM schema_migrations")).map((r) => r.name);
  try {
    return await read();
  } catch (error) {
    // Only a missing table means a first start; anything else (a connection, a permission) is the caller's to see.
    if (!isMissingTable(error)) throw error;
    await sql.transaction(async (tx) => {
      await lockMigrations(tx);
      await tx.query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
    });
    return read();
  }
};

/** SQLSTATE 42P01 (undefined_table), as pg and PGlite report it, or the Data API's message for it. */
const isMissingTable = (error: unknown): boolean => {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === "42P01" || (typeof message === "string" && /relation "?schema_migrations"? does not exist/.test(message));
};
