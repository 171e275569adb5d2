import type { SqlBackend, SqlValue } from "../../core/sql/port";

/**
 * A database that holds each statement for `delayOf(text)` ms (when it names one) before sending it: a slow
 * database, as the service meets it, for a request that passes its deadline.
 */
export const slowedSql =
  (open: () => Promise<SqlBackend>, delayOf: (text: string) => number | undefined) =>
  async (): Promise<SqlBackend> => {
    const sql = await open();
    const query = async <Row,>(text: string, params?: readonly SqlValue[]): Promise<Row[]> => {
      const ms = delayOf(text);
      if (ms) await new Promise((r) => setTimeout(r, ms));
      return sql.query<Row>(text, params);
    };
    return { ...sql, query } as SqlBackend;
  };
