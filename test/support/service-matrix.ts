import { backends } from "./databases";
import type { DriverName } from "./test-service";

/** Every HTTP suite runs through both drivers (Node host, Lambda events) on every SQL backend available. */
export const serviceMatrix = backends.flatMap((backend) =>
  (["node", "lambda"] as DriverName[]).map((driver) => ({ name: `${driver} on ${backend.name}`, driver, sql: backend.open })),
);
