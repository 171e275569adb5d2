/**
 * The Data API's way with a large result, scaled down for a test: the statement runs (and commits), then its answer
 * is refused when it holds more than `maxRows` rows, as the Data API refuses one over 1 MiB.
 */
import type { Sql } from "../../core/sql/port";

export const resultLimited = (sql: Sql, maxRows: number): Sql => ({
  async query(text, params) {
    const rows = await sql.query(text, params);
    if (rows.length > maxRows) throw new Error(`result of ${rows.length} rows refused (at most ${maxRows})`);
    return rows as never;
  },
  transaction: (fn) => sql.transaction(fn),
});
