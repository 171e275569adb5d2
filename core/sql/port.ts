/** The SQL port: one statement per call, positional `$1..$n` parameters, rows as plain objects. */
export type SqlValue = string | number | boolean | null | Date | Uint8Array;

export interface Sql {
  /** Runs exactly one statement (never a multi-statement string: the Data API rejects those). */
  query<Row = Record<string, unknown>>(text: string, params?: readonly SqlValue[]): Promise<Row[]>;
  /**
   * Runs `fn` inside one transaction; commits when it resolves, rolls back when it throws. Statements `fn` starts
   * together run one after another in the order started, and the commit or rollback waits for every one of them.
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
}

export interface SqlBackend extends Sql {
  readonly kind: "pglite" | "postgres" | "rds-data";
  close(): Promise<void>;
}
