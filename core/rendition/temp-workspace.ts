/**
 * A private directory under the system temp dir for one operation, removed afterwards: the only place it writes locally.
 * Its name carries the process id (`rendition-<pid>-XXXXXX`), so what a process killed mid-operation left (a source
 * copy, an output, up to three times an upload) is found and removed by the next one to start (`removeStaleWorkspaces`).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "../observability/logger";

const prefix = "rendition-";
/** Workspaces this process has open: any other under its own pid is a dead predecessor's (a restarted container). */
const open = new Set<string>();

export async function withWorkspace<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `${prefix}${process.pid}-`));
  open.add(dir);
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
    open.delete(dir);
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
};

/**
 * Removes the workspaces of processes that are gone (killed, or out of memory, mid-operation), at a process's start,
 * and says so in one log line when there were any. A live process's are kept, whoever it is (another rendition
 * service sharing the temp dir). Returns how many went.
 */
export async function removeStaleWorkspaces(log: Pick<Logger, "info">, root = tmpdir()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(root).catch(() => [])) {
    const pid = Number(new RegExp(`^${prefix}(\\d+)-`).exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const dir = join(root, name);
    if (pid === process.pid ? open.has(dir) : isAlive(pid)) continue;
    await rm(dir, { recursive: true, force: true });
    removed += 1;
  }
  if (removed > 0) log.info("removed the workspaces of runs that were killed mid-operation", { workspaces: removed });
  return removed;
}
