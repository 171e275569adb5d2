/** A migrated test database (PGlite, or Postgres when TEST_DATABASE_URL is set) for the audio tests, with a statement count. */
import type { Sql } from "../../core/sql/port";
import { backends, type DataApiBackend, type DatabaseBackend, migratedDatabase } from "./databases";

export interface BlobDatabase {
  sql: Sql;
  /** Number of statements run since the last reset (statement budgets). */
  statements(): number;
  /** Empties the blob tables and the statement count. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openBlobDatabase(backend: DatabaseBackend | DataApiBackend = backends[backends.length - 1]!): Promise<BlobDatabase> {
  const db = await migratedDatabase(backend);
  let count = 0;
  const sql: Sql = {
    query(text, params) {
      count += 1;
      return db.query(text, params);
    },
    transaction: (fn) => db.transaction(fn),
  };
  return {
    sql,
    statements: () => count,
    async reset() {
      await db.query("TRUNCATE blobs, uploads");
      count = 0;
    },
    close: () => db.close(),
  };
}
