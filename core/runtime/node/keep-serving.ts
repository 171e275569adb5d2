import type { Logger } from "../../observability/logger";

/**
 * A serving process outlives any one failure: a rejection nobody awaited, or an exception thrown from a callback,
 * is logged at error level and the process goes on serving every other tenant. (Node's default ends the process.)
 */
export const keepServing = (logger: Pick<Logger, "error">): void => {
  process.on("unhandledRejection", (reason) => {
    logger.error("unhandled rejection", reason instanceof Error ? reason : new Error(String(reason)));
  });
  process.on("uncaughtException", (error) => {
    logger.error("uncaught exception", error instanceof Error ? error : new Error(String(error)));
  });
};
