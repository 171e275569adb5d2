import { processEnvironment } from "../core/config/environment";
import { parseDatabaseConfig } from "../core/config/parse-config";
import { bundledMigrations } from "../core/sql/bundled-migrations";
import { migrate } from "../core/sql/migrate";
import { openRdsData } from "../core/sql/rds-data";

/**
 * The deploy-time migration step (an SST Script runs it on every deploy, before any function is updated): applies
 * the migrations bundled into this function over the Data API. A failure fails the deploy, so CloudFormation rolls
 * back and the old code keeps serving its old schema.
 */
export const handler = async (): Promise<{ applied: string[] }> => {
  const database = parseDatabaseConfig(processEnvironment());
  if (database.kind !== "rds-data") throw new Error("The migration function uses the RDS Data API: DATABASE_URL must be rds-data://");
  const sql = openRdsData(database);
  try {
    const result = await migrate(sql, bundledMigrations);
    console.log(JSON.stringify({ level: "INFO", message: "migrations applied", applied: result.applied }));
    return result;
  } finally {
    await sql.close();
  }
};
