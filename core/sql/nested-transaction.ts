import type { Sql, SqlValue } from "./port";

let savepoints = 0;

type Query = <Row>(text: string, params?: readonly SqlValue[]) => Promise<Row[]>;

/**
 * Runs `fn` inside an open transaction, on a `Sql` whose statements run on it and whose nested `transaction`
 * becomes a savepoint, so an inner failure rolls back only the inner work, as the port promises. A statement that
 * failed outside any savepoint fails the whole transaction even when `fn` caught its error: Postgres would turn
 * the COMMIT into a silent ROLLBACK, and the caller would take its work for committed.
 *
 * A transaction is one session, so statements `fn` starts together run one after another, in the order started
 * (pg queues a busy connection's queries itself but deprecates it, and the Data API refuses a call while its
 * transaction runs one). It settles only when every statement it started has: the COMMIT or ROLLBACK that follows
 * never overtakes one.
 */
export const runTransaction = async <T>(query: Query, fn: (tx: Sql) => Promise<T>): Promise<T> => {
  let failed: unknown;
  let queue: Promise<unknown> = Promise.resolve();
  const inOrder: Query = <Row>(text: string, params?: readonly SqlValue[]) => {
    const next = queue.then(() => query<Row>(text, params));
    queue = next.catch(() => undefined);
    return next;
  };
  const guarded: Query = async (text, params) => {
    try {
      return await inOrder(text, params);
    } catch (error) {
      failed ??= error;
      throw error;
    }
  };
  const tx: Sql = {
    query: guarded,
    async transaction(inner) {
      const name = `svc_sp_${++savepoints}`;
      await guarded(`SAVEPOINT ${name}`);
      try {
        const result = await inner(tx);
        await guarded(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (error) {
        await guarded(`ROLLBACK TO SAVEPOINT ${name}`);
        // The savepoint took the failure back: the transaction can commit again.
        failed = undefined;
        throw error;
      }
    },
  };
  let result: T;
  try {
    result = await fn(tx);
  } finally {
    await queue;
  }
  if (failed !== undefined) {
    throw new Error("a statement of this transaction failed and its error was caught: the transaction is rolled back, not committed", { cause: failed });
  }
  return result;
};
