import { AsyncLocalStorage } from "node:async_hooks";
import { PGlite, types, type ParserOptions } from "@electric-sql/pglite";
import { runTransaction } from "./nested-transaction";
import { ensurePgliteDataDir, pgliteSettings } from "./pglite-data-dir";
import { lockPgliteDir } from "./pglite-lock";
import { parseTimestamp } from "./parse-timestamp";
import { preparedStatements } from "./pglite-prepared";
import type { SqlBackend, SqlValue } from "./port";

// Normalised like every adapter: int8 and numeric as numbers, timestamps as UTC Dates, dates as 'YYYY-MM-DD'.
const parsers: ParserOptions = {
  [types.INT8]: Number,
  [types.NUMERIC]: Number,
  [types.TIMESTAMPTZ]: parseTimestamp,
  [types.TIMESTAMP]: parseTimestamp,
  [types.DATE]: (text: string) => text,
};

// Which PGlite instance the current async context holds a transaction on.
const openTransaction = new AsyncLocalStorage<{ db: PGlite; open: boolean }>();

export interface PgliteBackend extends SqlBackend {
  /** A tarball of the data directory, which `openPglite(dir, { loadDataDir })` starts from. */
  dumpDataDir(): Promise<Blob>;
}

/**
 * Embedded Postgres, in memory or in a data directory (created if absent, by `ensurePgliteDataDir`). `loadDataDir`
 * starts from a dump instead of running initdb, which is several times faster (tests start from templates).
 * A directory is locked until close() (pglite-lock.ts): two processes on one directory would each take their own
 * locks and lose and corrupt each other's writes, so a second open fails with `PgliteDirInUse` instead.
 */
export const openPglite = async (dir: string | "memory", options: { loadDataDir?: Blob } = {}): Promise<PgliteBackend> => {
  const lock = dir === "memory" ? undefined : await lockPgliteDir(dir);
  let db: PGlite;
  try {
    if (lock) await ensurePgliteDataDir(dir, pgliteSettings, { lock });
    db = await PGlite.create({
      ...(dir === "memory" ? {} : { dataDir: dir }),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      startParams: [...PGlite.defaultStartParams, ...pgliteSettings.flatMap((setting) => ["-c", setting])],
      parsers,
    });
  } catch (error) {
    await lock?.release();
    throw error;
  }

  const prepared = preparedStatements(db);
  const run = async <Row>(on: Pick<PGlite, "query">, text: string, params?: readonly SqlValue[]) =>
    (await on.query<Row>(text, params ? [...params] : undefined)).rows;

  return {
    kind: "pglite",
    async query<Row>(text: string, params?: readonly SqlValue[]) {
      // PGlite has one connection: a statement on the outer handle waits for the open transaction to end,
      // so issuing one from inside that transaction would hang forever. Fail loudly instead.
      const store = openTransaction.getStore();
      if (store?.db === db && store.open) {
        throw new Error("SQL issued outside its transaction from inside it: use the transaction's `tx`");
      }
      return (params?.length ? prepared<Row>(text, params) : undefined) ?? run<Row>(db, text, params);
    },
    // PGlite's transaction() holds its own mutex, so concurrent transactions queue rather than interleave.
    transaction(fn) {
      return db.transaction(async (tx) => {
        const store = { db, open: true };
        try {
          return await openTransaction.run(store, () => runTransaction((text, params) => run(tx, text, params), fn));
        } finally {
          store.open = false;
        }
      });
    },
    dumpDataDir: () => db.dumpDataDir("none"),
    async close() {
      try {
        if (!db.closed) await db.close();
      } finally {
        await lock?.release();
      }
    },
  };
};
