/**
 * The worker lease on a post: one pass at a time, fenced by a token every settle checks. It outlives the worker's
 * time limit, so a live lease always means a live (or just-killed) pass, never a stale one still believed.
 */
import { randomUUID } from "node:crypto";
import type { Sql } from "../sql/port";

/** A pass never runs longer than a Lambda stage function may (15 minutes). */
export const passTimeLimitMs = 15 * 60_000;
export const leaseMs = passTimeLimitMs + 60_000;

export type LeaseResult = { kind: "leased"; token: string } | { kind: "busy" } | { kind: "no-post" };

export const acquireLease = async (sql: Sql, appId: string, rkey: string, now: Date): Promise<LeaseResult> => {
  const token = randomUUID();
  const [row] = await sql.query(
    `WITH post AS (SELECT 1 FROM posts WHERE app_id = $1 AND rkey = $2),
     taken AS (
       INSERT INTO post_enrichment AS e (app_id, rkey, lease_token, lease_until)
       SELECT $1, $2, $3, $4::timestamptz FROM post
       ON CONFLICT (app_id, rkey) DO UPDATE SET lease_token = excluded.lease_token, lease_until = excluded.lease_until
        WHERE e.lease_until IS NULL OR e.lease_until <= $5::timestamptz
       RETURNING 1)
     SELECT EXISTS (SELECT 1 FROM post) AS found, EXISTS (SELECT 1 FROM taken) AS taken`,
    [appId, rkey, token, new Date(now.getTime() + leaseMs).toISOString(), now.toISOString()],
  );
  if (!row?.found) return { kind: "no-post" };
  return row.taken ? { kind: "leased", token } : { kind: "busy" };
};

/** Releases the lease if this token still holds it. */
export const releaseLease = async (sql: Sql, appId: string, rkey: string, token: string): Promise<void> => {
  await sql.query(
    `UPDATE post_enrichment SET lease_token = NULL, lease_until = NULL WHERE app_id = $1 AND rkey = $2 AND lease_token = $3`,
    [appId, rkey, token],
  );
};
