import type { Fail } from "./variable-parsers";
import type { VariableScope } from "./variable-scopes";
import { configVariables, variablesOf } from "./variables";

/**
 * Walks the variable table over `env`: empty and whitespace-only values count as unset; an unset required row of
 * the function's `scopes` (every row's when absent: the Node host), or a value its parser refuses, is reported
 * through `fail`. A value set outside the function's scopes is still checked. Returns the reader of parsed values, which refuses a name
 * that is not a row (so no variable is read without being documented).
 */
export const readVariables = (env: NodeJS.ProcessEnv, fail: Fail, scopes?: readonly VariableScope[]) => {
  const values = new Map<string, unknown>();
  const own = new Set(scopes ? variablesOf(scopes) : configVariables);
  for (const row of configVariables) {
    const raw = env[row.name]?.trim();
    if (!raw) {
      if (row.required === true && own.has(row)) fail(row.name, `${row.name} is required`);
      continue;
    }
    const value = row.parse ? row.parse(raw, fail, row.name) : raw;
    if (value !== undefined) values.set(row.name, value);
  }
  return <T = string>(name: string): T | undefined => {
    if (!configVariables.some((row) => row.name === name)) throw new Error(`${name} is not in the variable table (core/config/variables.ts)`);
    return values.get(name) as T | undefined;
  };
};
