/** Parses the environment as the server does and exits 1 naming each bad variable; `npm run check-config`. */
import { pathToFileURL } from "node:url";
import { processEnvironment } from "./environment";
import { ConfigError, parseConfig, type ConfigLog } from "./parse-config";
import type { Config } from "./types";
import { describeVariable } from "./variables";

export const stderrLog: ConfigLog = {
  error: (message, extra) => process.stderr.write(`${JSON.stringify({ level: "ERROR", message, ...(extra as object) })}\n`),
  warn: (message, extra) => process.stderr.write(`${JSON.stringify({ level: "WARN", message, ...(extra as object) })}\n`),
};

/** A process's configuration, or its end with exit code 1 after naming each problem's variable and rule. */
export function parsedOrExit<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const lines = err.problems.map((p) => {
      const rule = describeVariable(p.variable);
      return `  ${p.message}${rule ? `\n    expected: ${rule}` : ""}`;
    });
    process.stderr.write(`Configuration error:\n${lines.join("\n")}\n`);
    process.exit(1);
  }
}

/** The server entry calls this after loading local.env: a ConfigError ends the process with exit code 1. */
export const loadConfigOrExit = (env: NodeJS.ProcessEnv = processEnvironment(), log: ConfigLog = stderrLog): Config =>
  parsedOrExit(() => parseConfig(env, log));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config = loadConfigOrExit();
  process.stdout.write(`config ok: ${config.database?.kind} database, ${config.blobs?.kind} blobs, ${config.tenants.size} tenant(s)\n`);
}
