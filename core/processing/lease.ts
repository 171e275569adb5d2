/**
 * The worker lease on a post (docs/decisions.md#dispatch-and-the-worker): one pass at a time, fenced by a token every
 * settle checks. The lease is short and renewed: the holder renews it while it works (a heartbeat), so a live lease
 * means a pass that renewed it lately, and a dead holder's lease lapses within SVC_LEASE_MS of its last renewal, when
 * the sweep dispatches its stages again. Every time comes from the caller's clock, passed into SQL as a parameter.
 */
import { randomUUID } from "node:crypto";
import type { LeaseTiming } from "../config/processing-config";
import type { Logger } from "../observability/logger";
import type { Sql } from "../sql/port";

/** A pass never runs longer than a Lambda stage function may (15 minutes). */
export const passTimeLimitMs = 15 * 60_000;

export type LeaseResult = { kind: "leased"; token: string } | { kind: "busy" } | { kind: "no-post" };

export const acquireLease = async (sql: Sql, appId: string, rkey: string, now: Date, leaseMs: number): Promise<LeaseResult> => {
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

/** Extends the lease to `now` + `leaseMs` if this token still holds it; false when it does not. */
export const renewLease = async (sql: Sql, appId: string, rkey: string, token: string, now: Date, leaseMs: number): Promise<boolean> => {
  const rows = await sql.query(
    `UPDATE post_enrichment SET lease_until = $4::timestamptz WHERE app_id = $1 AND rkey = $2 AND lease_token = $3 RETURNING 1`,
    [appId, rkey, token, new Date(now.getTime() + leaseMs).toISOString()],
  );
  return rows.length > 0;
};

/** A pass's lease was taken over: what it does next is the new holder's, and it settles nothing more. */
export class LeaseLost extends Error {
  constructor() {
    super("the processing pass lost its lease to another pass");
  }
}

/**
 * Renews the lease every `heartbeatMs` while the pass works. A renewal that fails is logged and the next one tries
 * again (the lease allows two misses); one that finds the lease taken stops and aborts `lost` (with LeaseLost), so a
 * provider call in flight stops too instead of running on for a pass whose settles would all be refused.
 */
export const keepLease = (
  lease: { sql: Sql; appId: string; rkey: string; token: string; now: () => Date; timing: LeaseTiming },
  log: Pick<Logger, "warn">,
) => {
  const { sql, appId, rkey, token, now, timing } = lease;
  let beating: Promise<unknown> = Promise.resolve();
  const lost = new AbortController();
  const timer = setInterval(() => {
    beating = renewLease(sql, appId, rkey, token, now(), timing.ms).then(
      (held) => {
        if (held) return;
        clearInterval(timer);
        lost.abort(new LeaseLost());
      },
      (error: unknown) => log.warn("lease not renewed; the next heartbeat tries again", { appId, postId: rkey, error: String(error) }),
    );
  }, timing.heartbeatMs);
  timer.unref?.();
  return {
    /** Aborted once a renewal found the lease taken. */
    lost: lost.signal,
    /** Stops renewing, once a renewal under way has ended (so it cannot land after the release). */
    async stop() {
      clearInterval(timer);
      await beating;
    },
  };
};

/**
 * A post whose job could not be queued: a lease of no pass, lapsed at `now`, so the next sweep dispatches its pending
 * stages as it does a dead pass's (a retried request changes nothing and dispatches nothing). A held lease is left; a
 * lapsed one (a killed pass's, never released) is replaced, since the sweep counts only a lease that lapsed after the
 * stage was queued.
 */
export const leaveToSweep = async (sql: Sql, appId: string, rkey: string, now: Date): Promise<void> => {
  await sql.query(
    `INSERT INTO post_enrichment AS e (app_id, rkey, lease_token, lease_until) SELECT $1, $2, $3, $4::timestamptz
      WHERE EXISTS (SELECT 1 FROM posts WHERE app_id = $1 AND rkey = $2)
     ON CONFLICT (app_id, rkey) DO UPDATE SET lease_token = excluded.lease_token, lease_until = excluded.lease_until
      WHERE e.lease_until IS NULL OR e.lease_until <= $4::timestamptz`,
    [appId, rkey, randomUUID(), now.toISOString()],
  );
};

/** Releases the lease if this token still holds it. */
export const releaseLease = async (sql: Sql, appId: string, rkey: string, token: string, now: Date): Promise<void> => {
  await sql.query(
    `UPDATE post_enrichment SET lease_token = NULL, lease_until = NULL, released_at = $4::timestamptz
      WHERE app_id = $1 AND rkey = $2 AND lease_token = $3`,
    [appId, rkey, token, now.toISOString()],
  );
};

/** Waits between tries to let go of a lease, about 4 s in all. */
const releaseRetryMs = [250, 500, 1000, 2000];

/**
 * Lets go of the lease, trying again a few times when the store fails (a store that failed the pass is often back
 * in a second). Left to lapse, the lease would still be held when the job's next attempts come, seconds later:
 * each would find it and end `busy`, and the queue would give the job up before the lease ran out.
 */
export const releaseLeaseSoon = async (
  sql: Sql,
  lease: { appId: string; rkey: string; token: string },
  now: () => Date,
  sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
): Promise<void> => {
  for (const wait of [...releaseRetryMs, undefined]) {
    try {
      return await releaseLease(sql, lease.appId, lease.rkey, lease.token, now());
    } catch (error) {
      if (wait === undefined) throw error;
      await sleep(wait);
    }
  }
};
