import type { DatabaseConfig } from "./database-config";
import type { SqlBackend } from "./port";

/** Opens the configured SQL backend. Adapters load lazily so a Lambda bundle holds only the Data API one. */
export const openSql = async (db: DatabaseConfig, timeouts?: { dbConnectMs: number; dbStatementMs: number }): Promise<SqlBackend> => {
  switch (db.kind) {
    case "pglite": {
      const { openPglite } = await import("./pglite");
      return openPglite(db.dir);
    }
    case "postgres": {
      const { openPostgres } = await import("./postgres");
      return openPostgres(db.url, { connectMs: timeouts?.dbConnectMs, statementMs: timeouts?.dbStatementMs });
    }
    case "rds-data": {
      const { openRdsData } = await import("./rds-data");
      return openRdsData({ ...db, connectMs: timeouts?.dbConnectMs, requestMs: timeouts?.dbStatementMs });
    }
  }
};
