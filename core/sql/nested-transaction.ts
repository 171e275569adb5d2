import type { Sql, SqlValue } from "./port";

let savepoints = 0;

/**
 * The `Sql` handed to a transaction callback: statements run on the transaction, and a nested `transaction`
 * becomes a savepoint, so an inner failure rolls back only the inner work, as the port promises.
 */
export const transactionSql = (
  query: <Row>(text: string, params?: readonly SqlValue[]) => Promise<Row[]>,
): Sql => {
  const tx: Sql = {
    query,
    async transaction(fn) {
      const name = `svc_sp_${++savepoints}`;
      await query(`SAVEPOINT ${name}`);
      try {
        const result = await fn(tx);
        await query(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (error) {
        await query(`ROLLBACK TO SAVEPOINT ${name}`);
        throw error;
      }
    },
  };
  return tx;
};
