import type { Logger, LogExtra } from "../../core/observability/logger";

export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  fields: Record<string, unknown>;
  error?: Error;
}

/** A logger that keeps its lines, to assert on what the service logged and at which level. */
export const logRecorder = () => {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine["level"]) =>
    (message: string, ...extra: LogExtra[]) => {
      const fields = Object.assign({}, ...extra.filter((e) => !(e instanceof Error)));
      lines.push({ level, message, fields, error: extra.find((e): e is Error => e instanceof Error) });
    };
  const logger: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { logger, lines };
};
