/** Loads KEY=VALUE lines (local.env) into an environment without overriding what is already set. */
import { readFileSync } from "node:fs";

// process.loadEnvFile only targets process.env and util.parseEnv needs Node 20.12+, so this stays a tiny parser.
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

/** A variable already in `env` wins over the file; a missing file is fine. Returns `env`. */
export function loadEnvFile(path: string, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return env;
    throw err;
  }
  for (const [key, value] of Object.entries(parseEnvFile(text))) {
    if (env[key] === undefined) env[key] = value;
  }
  return env;
}
