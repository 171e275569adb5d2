/**
 * A ROLLBACK that failed after a transaction's own failure. The transaction's error stays the one thrown (it says
 * what went wrong; the rollback's failure only says the connection is gone too), carrying the rollback's failure
 * for the invocation to log with its request id (`core/invocation/run-invocation.ts`).
 */
const failures = new WeakMap<object, unknown>();

/** `error`, now carrying `rollback`'s failure; returned for `throw withRollbackFailure(error, rollback)`. */
export const withRollbackFailure = (error: unknown, rollback: unknown): unknown => {
  if (typeof error === "object" && error !== null) failures.set(error, rollback);
  return error;
};

/** The failure of the ROLLBACK that followed `error`, if one failed. */
export const rollbackFailureOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null ? failures.get(error) : undefined;
