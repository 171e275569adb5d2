/**
 * CPU time of the Postgres backends serving one database, for the benchmark's per-request figures: the backends
 * run on the same two cores as the server and the client, so their share decides a read's rate as much as the
 * server's does. Postgres runs on this machine (TEST_DATABASE_URL is local), so each backend's /proc/<pid>/stat is
 * readable; a backend that has exited keeps the last figure read of it.
 */
import { readFile } from "node:fs/promises";
import type pg from "pg";

export const databaseCpu = (admin: pg.Client, database: string): (() => Promise<number>) => {
  const seen = new Map<number, number>();
  return async () => {
    const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [database]);
    for (const { pid } of rows) {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
      if (!stat) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 10 ms.
      seen.set(pid, (Number(fields[11]) + Number(fields[12])) * 10);
    }
    return [...seen.values()].reduce((a, b) => a + b, 0);
  };
};
