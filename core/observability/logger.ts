import { Logger } from "@aws-lambda-powertools/logger";
import type { LogLevel } from "../config/types";

export type { Logger };

const levels: Record<LogLevel, "DEBUG" | "INFO" | "WARN" | "ERROR" | "SILENT"> = {
  debug: "DEBUG",
  info: "INFO",
  warn: "WARN",
  error: "ERROR",
  silent: "SILENT",
};

/** The root JSON logger; every request logs through a child carrying its request id. */
export const createLogger = (level: LogLevel): Logger =>
  new Logger({ serviceName: "audio-post-service", logLevel: levels[level] });

export const requestLogger = (root: Logger, requestId: string): Logger =>
  root.createChild({ persistentKeys: { requestId } });
