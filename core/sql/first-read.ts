import type { Sql, SqlValue } from "./port";

/**
 * A read whose statement others may share. Its text has no outer ORDER BY: `orderBy` gives the order over the
 * read's own columns, under whatever alias the statement that runs it reads them (`orderBy("r")` names `r.col`),
 * so the rows come in that order however the read is wrapped. A read of at most one row needs none.
 */
export interface OrderedRead {
  text: string;
  params: readonly SqlValue[];
  orderBy?: (rows: string) => string;
}

/** A SQL whose first read carries more than the read: the rate-limit take of a read route (core/rate-limit/take-with-first-query.ts). */
export interface FoldsFirstRead {
  firstRead<Row = Record<string, unknown>>(read: OrderedRead): Promise<Row[]>;
}

const folds = (sql: Sql): sql is Sql & FoldsFirstRead => typeof (sql as Partial<FoldsFirstRead>).firstRead === "function";

/** `SELECT ... FROM (<read>) AS <alias>`'s ORDER BY clause, or nothing for a read of one row. */
export const orderByClause = (read: OrderedRead, alias: string): string => (read.orderBy ? `ORDER BY ${read.orderBy(alias)}` : "");

/** The read as a statement of its own, in its order. */
export const orderedText = (read: OrderedRead): string =>
  read.orderBy ? `SELECT * FROM (${read.text}) AS svc_read ${orderByClause(read, "svc_read")}` : read.text;

/**
 * Runs a request's first read. On a rate-limited read route the request's limits are taken in this very statement
 * (one round trip where there were two; a refused request reads nothing); elsewhere it is the read alone.
 */
export const firstRead = <Row = Record<string, unknown>>(sql: Sql, read: OrderedRead): Promise<Row[]> =>
  folds(sql) ? sql.firstRead<Row>(read) : sql.query<Row>(orderedText(read), read.params);
