import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPglite } from "./pglite";
import { ensurePgliteDataDir, pgliteSettings } from "./pglite-data-dir";

// Each first start runs a real initdb (seconds on a busy machine).
const initdbTimeout = 120_000;

describe("PGlite data directory creation", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "svc-pglite-dir-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const opensWithData = async (dir: string) => {
    const db = await openPglite(dir);
    try {
      await db.query("CREATE TABLE t (v int)");
      await db.query("INSERT INTO t VALUES (1)");
      expect(await db.query("SELECT v FROM t")).toEqual([{ v: 1 }]);
    } finally {
      await db.close();
    }
  };

  it(
    "a first start runs initdb in a child process and renames the finished directory into place",
    async () => {
      const dir = path.join(root, "nested", "pg");
      let child: ChildProcess | undefined;
      const created = await ensurePgliteDataDir(dir, pgliteSettings, { onInitdbStarted: (c) => (child = c) });
      expect(child?.pid).toBeGreaterThan(0);
      expect(child?.pid).not.toBe(process.pid);
      expect(created?.initdbPeakRssMb).toBeGreaterThan(0);
      expect(existsSync(path.join(dir, "PG_VERSION"))).toBe(true);
      // initdb kept the settings in postgresql.conf, and no temporary directory is left beside it.
      expect(await readFile(path.join(dir, "postgresql.conf"), "utf8")).toMatch(/^shared_buffers = 16MB/m);
      expect(await readdir(path.dirname(dir))).toEqual(["pg"]);
      // A directory that holds a database is used as it is.
      expect(await ensurePgliteDataDir(dir, pgliteSettings)).toBeUndefined();
      await opensWithData(dir);
    },
    initdbTimeout,
  );

  it(
    "an initdb killed midway leaves no data directory, and the next start creates a whole one",
    async () => {
      const dir = path.join(root, "pg");
      // Killed once it has begun writing the directory: the most files it can leave behind.
      const killWhenWriting = (child: ChildProcess) => {
        const poll = setInterval(() => {
          const writing = readdirSafe(root).some((name) => name.startsWith("pg.initdb-") && existsSync(path.join(root, name, "data")));
          if (writing || child.exitCode !== null) {
            clearInterval(poll);
            child.kill("SIGKILL");
          }
        }, 2);
      };
      await expect(ensurePgliteDataDir(dir, pgliteSettings, { onInitdbStarted: killWhenWriting })).rejects.toThrow(/SIGKILL/);
      expect(existsSync(dir)).toBe(false);
      await opensWithData(dir);
    },
    initdbTimeout,
  );

  it(
    "a temporary directory left by a crashed first start is removed, and an empty data directory is filled",
    async () => {
      const dir = path.join(root, "pg");
      await mkdir(dir);
      const stale = path.join(root, "pg.initdb-stale", "data");
      await mkdir(stale, { recursive: true });
      await writeFile(path.join(stale, "PG_VERSION"), "18\n");
      await ensurePgliteDataDir(dir, pgliteSettings);
      expect((await readdir(root)).sort()).toEqual(["pg"]);
      await opensWithData(dir);
    },
    initdbTimeout,
  );

  it("a directory that holds files but no database is refused, not overwritten", async () => {
    const dir = path.join(root, "pg");
    await mkdir(dir);
    await writeFile(path.join(dir, "notes.txt"), "mine");
    await expect(ensurePgliteDataDir(dir, pgliteSettings)).rejects.toThrow(/holds files but no PGlite database/);
    expect(await readdir(dir)).toEqual(["notes.txt"]);
  });
});

const readdirSafe = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};
