import type { Fail } from "./variable-parsers";
import type { VariableScope } from "./variable-scopes";
import { configVariables, variablesOf, type VariableName, type VariableValue } from "./variables";

/** The variable table's reader: each variable's parsed value, or its row's default when unset. */
export type ReadVariable = <N extends VariableName>(name: N) => VariableValue<N>;

/**
 * Walks the variable table over `env`: empty and whitespace-only values count as unset; an unset required row of
 * the function's `scopes` (every row's when absent: the Node host), or a value its parser refuses, is reported
 * through `fail`. A value set outside the function's scopes is still checked. Returns the reader of parsed values
 * (an unset row reads as its default), which refuses a name that is not a row (so no variable is read without being
 * documented).
 */
export const readVariables = (env: NodeJS.ProcessEnv, fail: Fail, scopes?: readonly VariableScope[]): ReadVariable => {
  const values = new Map<string, unknown>();
  const own = new Set(scopes ? variablesOf(scopes) : configVariables);
  for (const row of configVariables) {
    const raw = env[row.name]?.trim();
    if (!raw) {
      if (row.required === true && own.has(row)) fail(row.name, `${row.name} is required`);
      else if (row.default !== undefined) values.set(row.name, row.default);
      continue;
    }
    const value = row.parse ? row.parse(raw, fail, row.name) : raw;
    values.set(row.name, value ?? row.default);
  }
  return <N extends VariableName>(name: N): VariableValue<N> => {
    if (!configVariables.some((row) => row.name === name)) throw new Error(`${name} is not in the variable table (core/config/variables.ts)`);
    return values.get(name) as VariableValue<N>;
  };
};
