import type { SqlBackend, SqlValue } from "../../core/sql/port";

/**
 * A database that holds each statement for `delayOf(text)` ms (when it names one) before sending it: a slow
 * database, as the service meets it, for a request that passes its deadline. `onSlowedSettled` is called once such
 * a statement has returned or failed, so a test can wait for the late write rather than guess how long it takes.
 */
export const slowedSql =
  (open: () => Promise<SqlBackend>, delayOf: (text: string) => number | undefined, onSlowedSettled?: (text: string) => void) =>
  async (): Promise<SqlBackend> => {
    const sql = await open();
    const query = async <Row,>(text: string, params?: readonly SqlValue[]): Promise<Row[]> => {
      const ms = delayOf(text);
      if (!ms) return sql.query<Row>(text, params);
      await new Promise((r) => setTimeout(r, ms));
      try {
        return await sql.query<Row>(text, params);
      } finally {
        onSlowedSettled?.(text);
      }
    };
    return { ...sql, query } as SqlBackend;
  };
