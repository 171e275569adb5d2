/** Loads KEY=VALUE lines (local.env) into an environment without overriding what is already set. */
import { readFileSync } from "node:fs";

// process.loadEnvFile only targets the process's own environment and util.parseEnv needs Node 20.12+, so this stays a tiny parser.
export function parseEnvFile(text: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    const key = match[1]!;
    let value = match[2]!;
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
      value = value.slice(1, -1);
    } else {
      // An unquoted value ends at a " #" comment.
      value = value.replace(/\s+#.*$/, "").trim();
    }
    result[key] = value;
  }
  return result;
}

/** The file's variables; a missing file has none. */
export function readEnvFile(path: string): Record<string, string> {
  try {
    return parseEnvFile(readFileSync(path, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw err;
  }
}

/** Sets each of `values` that `env` does not have yet; returns `env`. */
export function fillUnset(env: NodeJS.ProcessEnv, values: Record<string, string>): NodeJS.ProcessEnv {
  for (const [key, value] of Object.entries(values)) if (env[key] === undefined) env[key] = value;
  return env;
}

/** A variable already in `env` wins over the file; a missing file is fine. Returns `env`. */
export const loadEnvFile = (path: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => fillUnset(env, readEnvFile(path));
