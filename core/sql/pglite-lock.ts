import { randomBytes } from "node:crypto";
import { statSync, unlinkSync } from "node:fs";
import { link, mkdir, open, realpath, rename, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Where the lock on data directory `dir` lives: beside it, not in it, because initdb creates `dir` (by a rename onto
 * it) while the lock is held. Like Postgres's postmaster.pid, it holds the pid of the one process using the directory.
 * Beside its real path, so every spelling of the directory (through a symlink to it or to a folder above) takes the
 * one lock; a directory not made yet is named under its parent's real path.
 */
export const pgliteLockPath = async (dir: string): Promise<string> => {
  const absolute = path.resolve(dir);
  const real = await realpath(absolute).catch(async () =>
    path.join(await realpath(path.dirname(absolute)).catch(() => path.dirname(absolute)), path.basename(absolute)),
  );
  return `${real}.lock`;
};

export interface PgliteDirLock {
  readonly file: string;
  /** Removes the lock file if it is still this lock's; a second call does nothing. */
  release(): Promise<void>;
}

/** Another live process (or this one, through another open) uses the directory. */
export class PgliteDirInUse extends Error {
  constructor(dir: string, file: string, pid: number | undefined) {
    const holder = pid === undefined ? "another process" : pid === process.pid ? `this process (pid ${pid})` : `process ${pid}`;
    super(
      `PGlite data directory ${path.resolve(dir)} is in use by ${holder} (lock file ${file}): a PGlite directory serves ` +
        `one process at a time; stop that process or use another directory`,
    );
    this.name = "PgliteDirInUse";
  }
}

// The locks this process holds, by file, with the inode of each: a second open here is refused as another process's
// would be, a lock file with this pid that is not here is a dead process's that had the same pid (a restarted
// container's), and on exit each is removed.
const held = new Map<string, bigint>();
// Opens in this process take a file's lock one after another: a second would otherwise read the first's lock, with
// this pid, before the first had recorded it above, and take it for a dead process's.
const taking = new Map<string, Promise<unknown>>();
let exitHookInstalled = false;

/**
 * Takes the lock on `dir`, or throws `PgliteDirInUse` if a live process holds it. A lock whose process is dead (it was
 * killed, or the machine stopped) is taken over.
 */
export async function lockPgliteDir(dir: string): Promise<PgliteDirLock> {
  const file = await pgliteLockPath(dir);
  const next = (taking.get(file) ?? Promise.resolve()).then(() => take(dir, file));
  const settled = next.then(() => undefined, () => undefined);
  taking.set(file, settled);
  void settled.then(() => taking.get(file) === settled && taking.delete(file));
  return next;
}

async function take(dir: string, file: string): Promise<PgliteDirLock> {
  await mkdir(path.dirname(file), { recursive: true });
  let ino = await tryCreate(file);
  if (ino === undefined) {
    const holder = await readHolder(file);
    if (holder && isAlive(holder.pid, file)) throw new PgliteDirInUse(dir, file, holder.pid);
    if (holder) await removeStale(file, holder.ino);
    // Once: if another process took the stale lock in between, it holds the directory now.
    ino = await tryCreate(file);
    if (ino === undefined) throw new PgliteDirInUse(dir, file, (await readHolder(file))?.pid);
  }
  const mine = ino;
  held.set(file, mine);
  installExitHook();
  return {
    file,
    async release() {
      if (held.get(file) !== mine) return;
      held.delete(file);
      const current = await stat(file, { bigint: true }).catch(() => undefined);
      if (current?.ino === mine) await unlink(file).catch(() => undefined);
    },
  };
}

/**
 * Creates the lock file with O_EXCL semantics, its content complete from the first instant: written to a private
 * file, then hard-linked to the lock's name (which fails if the name exists). An `open('wx')` then `write` would
 * leave an empty lock file, which no reader could tell from a process about to write its pid, if killed in between.
 */
async function tryCreate(file: string): Promise<bigint | undefined> {
  const temp = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
  await writeFile(temp, `${process.pid}\n${new Date().toISOString()}\n`, { flag: "wx" });
  try {
    await link(temp, file);
    return (await stat(file, { bigint: true })).ino;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return undefined;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/** The pid in the lock file and the file's inode; `undefined` if it is gone (its holder released it meanwhile). */
async function readHolder(file: string): Promise<{ pid: number; ino: bigint } | undefined> {
  const handle = await open(file, "r").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!handle) return undefined;
  try {
    const text = await handle.readFile("utf8");
    const pid = Number(/^(\d+)\n/.exec(text)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0) {
      throw new Error(`${file} holds no process id: if no process uses ${file.slice(0, -".lock".length)}, delete the file`);
    }
    return { pid, ino: (await handle.stat({ bigint: true })).ino };
  } finally {
    await handle.close();
  }
}

function isAlive(pid: number, file: string): boolean {
  if (pid === process.pid) return held.has(file);
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * Removes the stale lock file whose inode is `ino`. Moved aside first and checked, not unlinked by name: a process
 * that took the same stale lock over a moment earlier has put its own file under the name, which is put back.
 */
async function removeStale(file: string, ino: bigint): Promise<void> {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    await rename(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if ((await stat(aside, { bigint: true })).ino !== ino) await link(aside, file).catch(() => undefined);
  await unlink(aside);
}

// On an exit without close() (process.exit, an uncaught error), best effort; a kill -9 leaves the file, which the
// next open takes over since its pid is dead.
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const [file, ino] of held) {
      try {
        if (statSync(file, { bigint: true }).ino === ino) unlinkSync(file);
      } catch {
        // already gone
      }
    }
  });
}
