import type { SqlValue } from "./port";

/** Collects positional parameters while a statement is assembled: `p.add(v)` returns its `$n`. */
export const placeholders = () => {
  const values: SqlValue[] = [];
  return {
    values,
    add(value: SqlValue): string {
      values.push(value);
      return `$${values.length}`;
    },
  };
};
