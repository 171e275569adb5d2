import { orderByClause, orderedText, type FoldsFirstRead, type OrderedRead } from "../sql/first-read";
import type { Sql, SqlValue } from "../sql/port";
import { limitersArgument, rateLimitOutcome, takeRateLimits, type RateLimitOutcome, type RateLimitRequest, type TakeRow } from "./take-rate-limits";

type CountedSql = Sql & { readonly count: number };

export interface TakeWithFirstQuery {
  /** The SQL the read runs on: its `firstRead` (core/sql/first-read.ts) takes the limiters in the same statement. */
  sql: CountedSql & FoldsFirstRead;
  /** Takes the limiters now unless the first read already did (a read that answered without one); settles as `admit` did. */
  take(): Promise<void>;
}

/**
 * The read and its rate limits in one statement: rate_limit_take runs first (a CTE), and the read (as a LATERAL
 * subquery) runs only when every limiter admitted the request, so a refused request reads nothing. One row always
 * comes back, carrying the limiters' rows; the read's own rows are those marked `svc_read_row`, ordered by the
 * read's own order.
 */
const withTake = (read: OrderedRead) => `WITH svc_rate_limit AS (
  SELECT key, allowed, remaining, reset_ms FROM rate_limit_take($${read.params.length + 1}::json, coalesce($${read.params.length + 2}::timestamptz, clock_timestamp()))
)
SELECT (SELECT json_agg(svc_rate_limit) FROM svc_rate_limit) AS svc_rate_limit, svc_read.*
  FROM (SELECT 1) AS svc_one
  LEFT JOIN LATERAL (
    SELECT true AS svc_read_row, svc_query.* FROM (${read.text}) AS svc_query
     WHERE (SELECT bool_and(allowed) FROM svc_rate_limit)
  ) AS svc_read ON true
 ${orderByClause(read, "svc_read")}`;

/**
 * Defers a read route's rate-limit take to its first read, saving a round trip: `admit` gets the outcome as soon as
 * it is known and throws to refuse the request (the read then rejects with that error, before it sees a row). Any
 * other query, a transaction, or a read after the first waits for the take instead.
 */
export const takeWithFirstQuery = (
  sql: CountedSql,
  hits: readonly RateLimitRequest[],
  now: Date | null,
  admit: (outcome: RateLimitOutcome) => void,
): TakeWithFirstQuery => {
  let taken: Promise<void> | undefined;
  const take = () => (taken ??= takeRateLimits(sql, hits, now).then(admit));
  const query = async <Row>(text: string, params: readonly SqlValue[] = []): Promise<Row[]> => {
    await take();
    return sql.query<Row>(text, params);
  };
  const deferred: TakeWithFirstQuery["sql"] = {
    get count() {
      return sql.count;
    },
    query,
    async firstRead<Row>(read: OrderedRead): Promise<Row[]> {
      if (taken || hits.length === 0) {
        await take();
        return sql.query<Row>(orderedText(read), read.params);
      }
      const combined = sql.query<Record<string, unknown>>(withTake(read), [...read.params, limitersArgument(hits), now]);
      taken = combined.then((rows) => admit(rateLimitOutcome(hits, rows[0]!.svc_rate_limit as TakeRow[])));
      await taken;
      const rows = await combined;
      return rows
        .filter((row) => row.svc_read_row === true)
        .map(({ svc_rate_limit: _limits, svc_read_row: _marker, ...row }) => row as Row);
    },
    async transaction(fn) {
      await take();
      return sql.transaction(fn);
    },
  };
  return { sql: deferred, take };
};
