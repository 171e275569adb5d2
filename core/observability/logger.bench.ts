import { Logger as PowertoolsLogger } from "@aws-lambda-powertools/logger";
import { bench, describe } from "vitest";
import { createLogger, invocationLogger } from "./logger";

/**
 * The per-invocation logger's cost: building it and logging one line below the level (so no I/O is measured).
 * Before: a Powertools child logger per request (reads process.env and copies the parent's configuration each time).
 * After: the invocation logger, a wrapper that passes the request id to the root logger.
 */
const root = createLogger("info");
const requestId = "3f0c7c52-4a6c-4c1e-9d1f-2f8a2d1b7e55";

describe("per-invocation logger", () => {
  bench("before: Powertools createChild({ persistentKeys: { requestId } })", () => {
    (root as unknown as PowertoolsLogger).createChild({ persistentKeys: { requestId } }).debug("filtered", { n: 1 });
  });

  bench("after: invocationLogger(root, requestId)", () => {
    invocationLogger(root, requestId).debug("filtered", { n: 1 });
  });
});
