import type { Sql } from "../sql/port";
import { limitersArgument, type RateLimitRequest, type RateLimitResult } from "./take-rate-limits";

/**
 * Where each limiter stands, read without taking a slot: for an answer that costs no request of its quota (an
 * idempotent replay) but, being a success, still carries `RateLimit` (docs/decisions.md#rate-limits). The same
 * figures rate_limit_take reports, with no hit appended: the hits still in the window, and the time until the
 * oldest of the last `limit` of them leaves it.
 */
export const peekRateLimits = async (sql: Sql, hits: readonly RateLimitRequest[], now: Date | null): Promise<RateLimitResult[]> => {
  if (hits.length === 0) return [];
  const rows = await sql.query<{ key: string; remaining: number; reset_ms: number }>(
    `SELECT t.key, greatest(t.lim - cardinality(w.hits), 0) AS remaining,
            CASE WHEN cardinality(w.hits) = 0 THEN t.win
                 ELSE greatest(1, ceil(extract(epoch FROM w.hits[greatest(1, cardinality(w.hits) - t.lim + 1)]
                                                 + t.win * interval '1 millisecond' - coalesce($2::timestamptz, clock_timestamp())) * 1000))::integer
            END AS reset_ms
       FROM json_to_recordset($1::json) AS t(key text, lim integer, win integer)
       LEFT JOIN rate_limit_hits AS r ON r.key = t.key
      CROSS JOIN LATERAL (SELECT ARRAY(SELECT h FROM unnest(r.hits) AS h
                                        WHERE h > coalesce($2::timestamptz, clock_timestamp()) - t.win * interval '1 millisecond' ORDER BY h) AS hits) AS w`,
    [limitersArgument(hits), now],
  );
  const byKey = new Map(rows.map((row) => [row.key, row]));
  return hits.map((h) => {
    const row = byKey.get(h.key)!;
    return { ...h, remaining: Number(row.remaining), resetMs: Number(row.reset_ms), allowed: true };
  });
};
