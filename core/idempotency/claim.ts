import { DomainError } from "../domain-error";
import { readJsonInParts } from "../sql/json-parts";
import { placeholders } from "../sql/placeholders";
import type { Sql, SqlValue } from "../sql/port";

/** An idempotency key is scoped by tenant, acting actor and route with its path (`create-post`, `patch-post/<postId>`). */
export interface IdempotencyScope {
  appId: string;
  actor: string;
  route: string;
  key: string;
}

/**
 * A key this request claimed: its scope and the lease it took, which fences its release and completion. After the
 * lease lapsed another request may take the key over with a later lease; the first one's late failure or success
 * then touches nothing of the new holder's.
 */
export interface HeldKey extends IdempotencyScope {
  lockedUntil: string;
}

/**
 * What claiming a key found. `written`: the key was taken over from a request that wrote and died before it stored
 * its answer (writtenClause marked the write); the taker answers without writing again.
 */
export type ClaimOutcome =
  | { kind: "claimed"; held: HeldKey; written: boolean }
  | { kind: "replay"; status: number; body: unknown }
  | { kind: "in-progress" }
  | { kind: "mismatch" };

/**
 * A key this request holds, handed to the write that answers it: embed `completeClause(p, answer)` as a
 * data-modifying CTE in that write, so the answer is stored in the same statement (a post never exists without its
 * replayable answer). A write that took the clause and returned success has stored the answer; otherwise the
 * claimant stores it after the handler. Embed `heldClause(p)` as a CTE too and write only when it has a row: a
 * request that stalled past its lease while another took the key over then writes nothing.
 */
export interface IdempotencyClaim {
  completeClause(p: (value: SqlValue) => string, answer: unknown): string;
  heldClause(p: (value: SqlValue) => string): string;
  /**
   * For a write that cannot store its answer in its own statement (the answer is read after it): embed as a CTE
   * with `AND <the write's condition>`, so a request that dies between its write and its answer leaves the key
   * marked written, and the retry that takes it over answers without writing a second time.
   */
  writtenClause(p: (value: SqlValue) => string): string;
  /** This request took the key over from one that wrote and died before answering: answer, write nothing. */
  written: boolean;
}

export interface IdempotencyOptions {
  /** How long a running claim holds the key before a new request may take it over (the claimant presumed dead). */
  leaseMs?: number;
  /** How long a key is kept. */
  ttlMs?: number;
  /** Chance that a claim also deletes up to 100 expired keys (keeps the table small without a sweeper job). */
  pruneChance?: number;
}

export const idempotencyLeaseMs = 60_000;
export const idempotencyTtlMs = 24 * 60 * 60_000;

interface ClaimRow {
  claimed: boolean;
  written: boolean;
  fingerprint: string | null;
  state: "running" | "done" | null;
  response_status: number | null;
  response_bytes: number | null;
  response_body: unknown;
}

/**
 * A stored answer up to this many bytes comes back in the claim's own row; a larger one (a PATCH's view of a long
 * post with its waveform and transcript) is read after it in parts, as the RDS Data API refuses a row over 64 KB.
 */
export const inlineAnswerBytes = 48 * 1024;

// One statement: take the key when it is new, expired, or its running lease has lapsed; otherwise read the holder.
// The read uses the statement's snapshot, so a holder that committed after it started is invisible: with nothing
// claimed and nothing visible, the only explanation is a concurrent claimant, whose body a second statement reads
// (liveKeySql). The prune CTE drops a few expired keys now and then (never our own row, never one in use).
/** A key that still holds: not expired, and not a running claim whose lease lapsed. `now` names the clock's parameter. */
const liveKey = (alias: string, now: string) =>
  `${alias}.expires_at > ${now}::timestamptz AND NOT (${alias}.state = 'running' AND ${alias}.locked_until <= ${now}::timestamptz)`;

const claimSql = `
WITH pruned AS (
  DELETE FROM idempotency_keys
   WHERE (app_id, actor, route, key) IN (
     SELECT p.app_id, p.actor, p.route, p.key FROM idempotency_keys AS p
      WHERE p.expires_at < $9::timestamptz AND (SELECT random()) < $8::float8
        AND NOT (p.app_id = $1 AND p.actor = $2 AND p.route = $3 AND p.key = $4)
      LIMIT 100 FOR UPDATE SKIP LOCKED)
), claimed AS (
  INSERT INTO idempotency_keys AS k (app_id, actor, route, key, fingerprint, state, locked_until, expires_at)
  VALUES ($1, $2, $3, $4, $5, 'running', $6::timestamptz, $7::timestamptz)
  ON CONFLICT (app_id, actor, route, key) DO UPDATE
     SET fingerprint = excluded.fingerprint, state = 'running',
         -- A lapsed claim's written mark (writtenClause) passes to the taker with the same body; an expired key starts afresh.
         response_status = CASE WHEN k.expires_at > $9::timestamptz AND k.fingerprint = excluded.fingerprint THEN k.response_status END,
         response_body = NULL, locked_until = excluded.locked_until, expires_at = excluded.expires_at
   WHERE k.expires_at <= $9::timestamptz OR (k.state = 'running' AND k.locked_until <= $9::timestamptz)
  RETURNING k.response_status IS NOT NULL AS written
)
SELECT EXISTS (SELECT 1 FROM claimed) AS claimed, coalesce((SELECT written FROM claimed), false) AS written,
       e.fingerprint, e.state, e.response_status, answer.bytes AS response_bytes,
       CASE WHEN answer.bytes <= ${inlineAnswerBytes} THEN e.response_body END AS response_body
  FROM (VALUES (1)) AS one (x)
  LEFT JOIN idempotency_keys AS e
    ON e.app_id = $1 AND e.actor = $2 AND e.route = $3 AND e.key = $4
   AND ${liveKey("e", "$9")}
  LEFT JOIN LATERAL (SELECT octet_length(convert_to(e.response_body::text, 'UTF8')) AS bytes) AS answer ON true`;

// The live key's body, read in a statement of its own: its snapshot is taken after the claim's, so it sees a
// concurrent claimant that committed while the claim waited for it.
const liveKeySql = `
SELECT k.fingerprint FROM idempotency_keys AS k
 WHERE k.app_id = $1 AND k.actor = $2 AND k.route = $3 AND k.key = $4 AND ${liveKey("k", "$5")}`;

/**
 * Claims `scope` for a request whose body has `fingerprint`, in one statement (two when it met a claimant committing
 * the key meanwhile). A different body under a live key is a mismatch even while the first request runs (422 wins
 * over 409). An expired key, or a running claim whose lease lapsed, is free again whatever the body. `now` is the
 * invocation's clock (`deps.now()`), not the database's.
 */
export const claimIdempotencyKey = async (
  sql: Sql,
  scope: IdempotencyScope,
  fingerprint: string,
  now: Date,
  options: IdempotencyOptions = {},
): Promise<ClaimOutcome> => {
  const lockedUntil = new Date(now.getTime() + (options.leaseMs ?? idempotencyLeaseMs)).toISOString();
  const [row] = await sql.query<ClaimRow>(claimSql, [
    scope.appId,
    scope.actor,
    scope.route,
    scope.key,
    fingerprint,
    lockedUntil,
    new Date(now.getTime() + (options.ttlMs ?? idempotencyTtlMs)).toISOString(),
    options.pruneChance ?? 0.01,
    now.toISOString(),
  ]);
  if (!row) throw new Error("idempotency claim returned no row");
  if (row.claimed) return { kind: "claimed", held: { ...scope, lockedUntil }, written: row.written === true };
  if (row.state === null) {
    // A concurrent claimant took the key while this claim waited on it: still a mismatch when its body differs.
    const [live] = await sql.query<{ fingerprint: string }>(liveKeySql, [scope.appId, scope.actor, scope.route, scope.key, now.toISOString()]);
    return live && live.fingerprint !== fingerprint ? { kind: "mismatch" } : { kind: "in-progress" };
  }
  if (row.fingerprint !== fingerprint) return { kind: "mismatch" };
  if (row.state !== "done") return { kind: "in-progress" };
  if (row.response_bytes === null || Number(row.response_bytes) <= inlineAnswerBytes) return { kind: "replay", status: Number(row.response_status), body: row.response_body };
  const body = await readStoredAnswer(sql, scope);
  // Gone between the two reads: the key expired, and was pruned or claimed anew. A retry finds which.
  return body === null ? { kind: "in-progress" } : { kind: "replay", status: Number(row.response_status), body };
};

/** A finished key's answer too large for the claim's row, in parts; it is never replaced while the key lives. */
const readStoredAnswer = (sql: Sql, scope: IdempotencyScope): Promise<unknown> =>
  readJsonInParts(
    sql,
    `SELECT convert_to(response_body::text, 'UTF8') AS body FROM idempotency_keys WHERE app_id = $1 AND actor = $2 AND route = $3 AND key = $4 AND state = 'done'`,
    [scope.appId, scope.actor, scope.route, scope.key],
    `the stored answer of key ${scope.key}`,
  );

/**
 * Frees this request's running claim at once (the request failed), so the client can fix the request and retry.
 * A claim marked written (its write committed, its answer did not follow) is not deleted but its lease ended: the
 * retry takes it over at once and answers without writing again.
 */
export const releaseIdempotencyKey = async (sql: Sql, held: HeldKey): Promise<void> => {
  const mine = `app_id = $1 AND actor = $2 AND route = $3 AND key = $4 AND state = 'running' AND locked_until = $5::timestamptz`;
  await sql.query(
    `WITH lapsed AS (UPDATE idempotency_keys SET locked_until = '-infinity' WHERE ${mine} AND response_status IS NOT NULL)
     DELETE FROM idempotency_keys WHERE ${mine} AND response_status IS NULL`,
    [held.appId, held.actor, held.route, held.key, held.lockedUntil],
  );
};

/**
 * The statement that stores a successful response on the running claim, for embedding as a data-modifying CTE in
 * the statement that does the work (`WITH post AS (INSERT ...), done AS (<this>) SELECT ...`).
 * `p` allocates a placeholder for a value in the host statement and returns it (e.g. `placeholders().add`).
 */
export const completeIdempotencyClause = (
  p: (value: SqlValue) => string,
  held: HeldKey,
  status: number,
  body: unknown,
  now: Date,
  options: Pick<IdempotencyOptions, "ttlMs"> = {},
): string =>
  `UPDATE idempotency_keys
      SET state = 'done', response_status = ${p(status)}::integer, response_body = ${p(JSON.stringify(body ?? null))}::json,
          expires_at = ${p(new Date(now.getTime() + (options.ttlMs ?? idempotencyTtlMs)).toISOString())}::timestamptz
    WHERE app_id = ${p(held.appId)} AND actor = ${p(held.actor)} AND route = ${p(held.route)}
      AND key = ${p(held.key)} AND state = 'running' AND locked_until = ${p(held.lockedUntil)}::timestamptz`;

/**
 * A SELECT of the claim's row while `held` still holds it (running, under the lease it took), locking it, for
 * embedding as a CTE in the write the claim answers. The lease alone fences only the answer: a holder that stalled
 * past it would still write after a takeover, a second post under one key. Guarded by this clause, its write stores
 * nothing once the key moved on, and the lock holds off a takeover until the write commits.
 */
export const heldIdempotencyClause = (p: (value: SqlValue) => string, held: HeldKey): string =>
  `SELECT 1 FROM idempotency_keys
    WHERE app_id = ${p(held.appId)} AND actor = ${p(held.actor)} AND route = ${p(held.route)} AND key = ${p(held.key)}
      AND state = 'running' AND locked_until = ${p(held.lockedUntil)}::timestamptz
      FOR UPDATE`;

/**
 * The statement that marks the running claim written (its status stored, its answer not yet), for embedding as a
 * data-modifying CTE in the write, followed by `AND <the write's condition>`.
 */
export const writtenIdempotencyClause = (p: (value: SqlValue) => string, held: HeldKey, status: number): string =>
  `UPDATE idempotency_keys SET response_status = ${p(status)}::integer
    WHERE app_id = ${p(held.appId)} AND actor = ${p(held.actor)} AND route = ${p(held.route)} AND key = ${p(held.key)}
      AND state = 'running' AND locked_until = ${p(held.lockedUntil)}::timestamptz`;

/** A write that found its key taken over (it stalled past its lease) stored nothing: 409, as while another runs. */
export const keyTakenOver = (): DomainError =>
  new DomainError("IDEMPOTENCY_IN_PROGRESS", "another request with this Idempotency-Key took it over while this one ran");

/** Standalone form of completeIdempotencyClause: one statement. */
export const completeIdempotencyKey = async (
  sql: Sql,
  held: HeldKey,
  status: number,
  body: unknown,
  now: Date,
  options: Pick<IdempotencyOptions, "ttlMs"> = {},
): Promise<void> => {
  const p = placeholders();
  await sql.query(completeIdempotencyClause(p.add, held, status, body, now, options), p.values);
};
