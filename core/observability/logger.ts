import { Logger as PowertoolsLogger } from "@aws-lambda-powertools/logger";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

/** Structured fields, or an Error (logged with its stack under `error`). */
export type LogExtra = Record<string, unknown> | Error;

/** What code logs through: the Powertools root logger, or an invocation's view of it carrying the request id. */
export interface Logger {
  debug(message: string, ...extra: LogExtra[]): void;
  info(message: string, ...extra: LogExtra[]): void;
  warn(message: string, ...extra: LogExtra[]): void;
  error(message: string, ...extra: LogExtra[]): void;
}

/** A logger whose every line carries `fields` (a request id, a component), without a Powertools child per call. */
export const withFields = (root: Logger, fields: Record<string, unknown>): Logger => new FieldsLogger(root, fields);

const levels: Record<LogLevel, "DEBUG" | "INFO" | "WARN" | "ERROR" | "SILENT"> = {
  debug: "DEBUG",
  info: "INFO",
  warn: "WARN",
  error: "ERROR",
  silent: "SILENT",
};

/**
 * The process's one JSON logger (Powertools), built once per process or container. Powertools' types take an Error
 * only as the sole extra argument, but it reads each extra item (fields merged, an Error under `error`), which the
 * invocation logger relies on to put the request id beside an error.
 */
export const createLogger = (level: LogLevel, options: { plainInfo?: boolean } = {}): Logger => {
  const powertools = new PowertoolsLogger({ serviceName: "audio-post-service", logLevel: levels[level] }) as unknown as Logger;
  return options.plainInfo && (level === "debug" || level === "info") ? withPlainInfo(powertools) : powertools;
};

const service = "audio-post-service";

/**
 * The Node host's info lines (one per request) written as Powertools writes them, without its per-line work (about
 * 4% of a GET's CPU): fields of plain values only, no Lambda context to add. Lines with an Error, and every other
 * level, still go through Powertools. Not for Lambda, where Powertools adds the X-Ray trace id.
 */
const withPlainInfo = (powertools: Logger): Logger => ({
  debug: (message, ...extra) => (flushLines(), powertools.debug(message, ...extra)),
  warn: (message, ...extra) => (flushLines(), powertools.warn(message, ...extra)),
  error: (message, ...extra) => (flushLines(), powertools.error(message, ...extra)),
  info(message, ...extra) {
    if (extra.some((e) => e instanceof Error)) return flushLines(), powertools.info(message, ...extra);
    let text: string;
    try {
      text = JSON.stringify(Object.assign({ level: "INFO", message, timestamp: new Date().toISOString(), service, sampling_rate: 0 }, ...extra));
    } catch {
      return flushLines(), powertools.info(message, ...extra); // a BigInt or a cycle: Powertools' serialiser copes
    }
    writeLine(`${text}\n`);
  },
});

/**
 * The plain info lines of one turn of the event loop go to stdout in one write: a write(2) per request was about a
 * tenth of a GET's CPU on the Node host under load. Any other line flushes them first, so the order holds, and so
 * does the process's exit (stdout to a pipe or file is written synchronously).
 */
let pendingLines = "";
let flushScheduled = false;
let exitHooked = false;
const flushLines = () => {
  if (!pendingLines) return;
  const text = pendingLines;
  pendingLines = "";
  process.stdout.write(text);
};
const writeLine = (line: string) => {
  pendingLines += line;
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", flushLines);
  }
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(() => {
    flushScheduled = false;
    flushLines();
  });
};

/**
 * An invocation's logger: every line carries its request id. A plain wrapper rather than a Powertools child logger,
 * which reads process.env and copies its parent's configuration on every creation (see logger.bench.ts).
 */
class FieldsLogger implements Logger {
  constructor(
    readonly root: Logger,
    private readonly keys: Record<string, unknown>,
  ) {}
  debug(message: string, ...extra: LogExtra[]) {
    this.root.debug(message, this.keys, ...extra);
  }
  info(message: string, ...extra: LogExtra[]) {
    this.root.info(message, this.keys, ...extra);
  }
  warn(message: string, ...extra: LogExtra[]) {
    this.root.warn(message, this.keys, ...extra);
  }
  error(message: string, ...extra: LogExtra[]) {
    this.root.error(message, this.keys, ...extra);
  }
}

export const invocationLogger = (root: Logger, requestId: string): Logger => new FieldsLogger(root, { requestId });

/** The process logger under any number of field wrappers: what process-wide state (outages) is keyed on. */
export const rootOf = (logger: Logger): Logger => (logger instanceof FieldsLogger ? rootOf(logger.root) : logger);
