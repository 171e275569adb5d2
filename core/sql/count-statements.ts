import type { Sql } from "./port";

/** Wraps a Sql so each request can report how many statements (round trips on the Data API) it cost. */
export const countStatements = (inner: Sql): Sql & { readonly count: number } => {
  let count = 0;
  const wrap = (sql: Sql): Sql => ({
    query(text, params) {
      count += 1;
      return sql.query(text, params);
    },
    transaction(fn) {
      count += 2; // BEGIN and COMMIT are round trips of their own on the Data API
      return sql.transaction((tx) => fn(wrap(tx)));
    },
  });
  const counted = wrap(inner);
  return {
    ...counted,
    get count() {
      return count;
    },
  };
};
