import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPglite } from "./pglite";
import { ensurePgliteDataDir, pgliteSettings } from "./pglite-data-dir";
import { lockPgliteDir, pgliteLockPath } from "./pglite-lock";

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

describe("a PGlite data directory serves one process at a time (its lock file beside it)", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), "svc-pglite-lock-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  // Names the directory, the holding process and the lock file.
  const inUseBy = (pid: number, dir: string) => {
    const quoted = dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`^PGlite data directory ${quoted} is in use by (process ${pid}|this process \\(pid ${pid}\\)) \\(lock file ${quoted}\\.lock\\)`);
  };

  it(
    "a second open, from another process or this one, fails naming the directory and the holder's pid, and writes nothing; once the holder closed, it opens",
    async () => {
      const dir = path.join(root, "pg");
      const first = await openPglite(dir);
      await first.query("CREATE TABLE kept (v int)");
      await first.query("INSERT INTO kept VALUES (1)");
      const before = await snapshot(dir);

      expect(await openInChild(dir)).toMatch(inUseBy(process.pid, dir));
      await expect(openPglite(dir)).rejects.toThrow(inUseBy(process.pid, dir));
      await expect(ensurePgliteDataDir(dir, pgliteSettings)).rejects.toThrow(inUseBy(process.pid, dir));
      expect(await snapshot(dir)).toEqual(before);
      expect((await readdir(root)).sort()).toEqual(["pg", "pg.lock"]);
      expect(await readFile(await pgliteLockPath(dir), "utf8")).toMatch(new RegExp(`^${process.pid}\\n`));

      await first.close();
      expect(await readdir(root)).toEqual(["pg"]);
      expect(await openInChild(dir)).toBe("opened");
      const again = await openPglite(dir);
      expect(await again.query("SELECT v FROM kept")).toEqual([{ v: 1 }]);
      await again.close();
    },
    initdbTimeout,
  );

  it(
    "concurrent first starts: the second fails while the first runs initdb, and leaves the first's temporary directory alone (no ENOENT)",
    async () => {
      const dir = path.join(root, "pg");
      const first = openPglite(dir);
      while (!readdirSafe(root).some((name) => name.startsWith("pg.initdb-"))) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await openInChild(dir)).toMatch(inUseBy(process.pid, dir));
      const db = await first;
      await db.query("SELECT 1");
      await db.close();
      expect(await readdir(root)).toEqual(["pg"]);
    },
    initdbTimeout,
  );

  it("a lock left by a dead process, or by an earlier process with this pid (a restarted container), is taken over", async () => {
    const dir = path.join(root, "pg");
    const file = await pgliteLockPath(dir);
    const exited = spawn(process.execPath, ["-e", ""]);
    const deadPid = exited.pid!;
    await new Promise((resolve) => exited.once("exit", resolve));
    for (const stalePid of [deadPid, process.pid]) {
      await writeFile(file, `${stalePid}\n2020-01-01T00:00:00.000Z\n`);
      const lock = await lockPgliteDir(dir);
      expect(await readFile(file, "utf8")).toMatch(new RegExp(`^${process.pid}\\n`));
      await lock.release();
      expect(existsSync(file)).toBe(false);
    }
    // A file this code did not write is refused, never taken for stale.
    await writeFile(file, "");
    await expect(lockPgliteDir(dir)).rejects.toThrow(/holds no process id/);
    expect(await readdir(root)).toEqual(["pg.lock"]);
  });

  it("every spelling of the directory takes the one lock: through a symlink to it, or to a folder above it", async () => {
    const dir = path.join(root, "real", "pg");
    await mkdir(dir, { recursive: true });
    await symlink(dir, path.join(root, "pg-link"));
    await symlink(path.join(root, "real"), path.join(root, "real-link"));
    const lock = await lockPgliteDir(dir);
    await expect(lockPgliteDir(path.join(root, "pg-link"))).rejects.toThrow(/is in use by this process/);
    await expect(lockPgliteDir(path.join(root, "real-link", "pg"))).rejects.toThrow(/is in use by this process/);
    expect(await openInChild(path.join(root, "pg-link"))).toMatch(/is in use by process/);
    await lock.release();
  });

  it("concurrent opens in one process: one takes the lock, the others are refused", async () => {
    const dir = path.join(root, "pg");
    const results = await Promise.allSettled([lockPgliteDir(dir), lockPgliteDir(dir), lockPgliteDir(dir)]);
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results) {
      if (result.status === "fulfilled") await result.value.release();
      else expect((result.reason as Error).message).toMatch(inUseBy(process.pid, dir));
    }
  });
});

const repoRoot = path.resolve(import.meta.dirname, "../..");

/** openPglite(dir) in another process: "opened" (then closed), or the error's message. */
async function openInChild(dir: string): Promise<string> {
  const script = `import { openPglite } from ${JSON.stringify(path.join(import.meta.dirname, "pglite.ts"))};
    try { const db = await openPglite(${JSON.stringify(dir)}); await db.close(); console.log("opened"); }
    catch (error) { console.log(error.message); }`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repoRoot });
  return stdout.trim();
}

/** Every file under `dir` with its size and modification time. */
async function snapshot(dir: string) {
  const files = (await readdir(dir, { recursive: true })).sort();
  return Promise.all(files.map(async (file) => ({ file, ...(({ size, mtimeMs }) => ({ size, mtimeMs }))(await stat(path.join(dir, file))) })));
}

const readdirSafe = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};
