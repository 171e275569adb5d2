import { backends, dataApiBackends } from "./databases";
import type { DriverName } from "./test-service";

/**
 * Every HTTP suite runs through both drivers (Node host, Lambda events) on every SQL backend available, plus the
 * deployed combination: Lambda events over the RDS Data API (an emulator in front of the same database engines).
 */
export const serviceMatrix = [
  ...backends.flatMap((backend) =>
    (["node", "lambda"] as DriverName[]).map((driver) => ({ name: `${driver} on ${backend.name}`, driver, sql: backend.open })),
  ),
  ...dataApiBackends.map((backend) => ({ name: `lambda on ${backend.name}`, driver: "lambda" as DriverName, sql: backend.open })),
];

/** Both drivers on PGlite and (when TEST_DATABASE_URL is set) Postgres, without the Data API emulator: for suites
 * whose rules live at the HTTP edge rather than in the SQL adapter. */
export const edgeMatrix = backends.flatMap((backend) =>
  (["node", "lambda"] as DriverName[]).map((driver) => ({ name: `${driver} on ${backend.name}`, driver, sql: backend.open })),
);
