import { configured } from "../../config/parse-config";
import type { PortLoader } from "./port-loader";

/** The Lambda SQL port: the RDS Data API. */
export const rdsDataSql: PortLoader<"sql"> = async (config) => {
  const database = configured(config.database, "DATABASE_URL");
  if (database.kind !== "rds-data") throw new Error("Lambda functions use the RDS Data API: DATABASE_URL must be rds-data://");
  const { openRdsData } = await import("../../sql/rds-data");
  return openRdsData({ ...database, connectMs: config.timeouts.dbConnectMs, requestMs: config.timeouts.dbStatementMs });
};
