import type { Sql } from "../sql/port";

export interface RateLimitRequest {
  name: string;
  key: string;
  limit: number;
  windowMs: number;
}

export interface RateLimitResult extends RateLimitRequest {
  /** Slots left in the window after this request. */
  remaining: number;
  /** With room: ms until the oldest hit leaves the window; when full: ms until one request fits again. */
  resetMs: number;
  /** This limiter had room (the request as a whole is allowed only when every limiter had room). */
  allowed: boolean;
}

export interface RateLimitOutcome {
  allowed: boolean;
  results: RateLimitResult[];
}

/** One limiter's row as rate_limit_take returns it. */
export interface TakeRow {
  key: string;
  allowed: boolean;
  remaining: number;
  reset_ms: number;
}

/** The limiters as rate_limit_take's argument (a JSON array of {key, lim, win}), after checking them. */
export const limitersArgument = (hits: readonly RateLimitRequest[]): string => {
  if (new Set(hits.map((h) => h.key)).size !== hits.length) throw new Error("rate limit keys must be distinct");
  for (const h of hits) {
    if (!Number.isInteger(h.limit) || h.limit < 0 || !Number.isInteger(h.windowMs) || h.windowMs <= 0) {
      throw new Error(`invalid rate limit ${h.name}: ${h.limit} per ${h.windowMs} ms`);
    }
  }
  return JSON.stringify(hits.map((h) => ({ key: h.key, lim: h.limit, win: h.windowMs })));
};

/** The request's outcome from rate_limit_take's rows: allowed only when every limiter had room. */
export const rateLimitOutcome = (hits: readonly RateLimitRequest[], rows: readonly TakeRow[]): RateLimitOutcome => {
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const results = hits.map((h): RateLimitResult => {
    const row = byKey.get(h.key);
    if (!row) throw new Error(`rate_limit_take returned no row for ${h.key}`);
    return { ...h, remaining: Number(row.remaining), resetMs: Number(row.reset_ms), allowed: row.allowed };
  });
  return { allowed: results.every((r) => r.allowed), results };
};

/**
 * Takes one slot from every limiter of a request in one SQL statement (one round trip), all or nothing:
 * a request denied by one limiter is not counted by the others. Windows are measured at `now` (a test's clock), or
 * on the database's clock when it is null (system-clock.ts). See rate_limit_take in migrations/0002, 0008 and 0012.
 */
export const takeRateLimits = async (sql: Sql, hits: readonly RateLimitRequest[], now: Date | null): Promise<RateLimitOutcome> => {
  if (hits.length === 0) return { allowed: true, results: [] };
  const rows = await sql.query<TakeRow>("SELECT key, allowed, remaining, reset_ms FROM rate_limit_take($1::json, coalesce($2::timestamptz, clock_timestamp()))", [
    limitersArgument(hits),
    now,
  ]);
  return rateLimitOutcome(hits, rows);
};
