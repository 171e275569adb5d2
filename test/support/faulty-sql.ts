import type { SqlBackend } from "../../core/sql/port";

/**
 * A real database whose statements start failing with `error()` once `fail()` is called (after startup migrated
 * it), as a backend's client fails when its database goes away; `heal()` lets them through again.
 */
export const faultySql = (open: () => Promise<SqlBackend>) => {
  let error: (() => unknown) | undefined;
  let inner: SqlBackend | undefined;
  return {
    fail: (make: () => unknown) => void (error = make),
    heal: () => void (error = undefined),
    get inner() {
      return inner!;
    },
    open: async (): Promise<SqlBackend> => {
      const sql = (inner = await open());
      const failing = () => (error ? Promise.reject(error()) : undefined);
      return {
        kind: sql.kind,
        close: () => sql.close(),
        query: (text, params) => failing() ?? sql.query(text, params),
        transaction: (fn) => failing() ?? sql.transaction(fn),
      };
    },
  };
};
