import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { lockPgliteDir, type PgliteDirLock } from "./pglite-lock";

/** What creating a data directory cost; `undefined` from `ensurePgliteDataDir` when it already held a database. */
export interface CreatedDataDir {
  ms: number;
  /** Peak RSS of the initdb process (this process's own memory is not part of it). */
  initdbPeakRssMb: number;
}

/**
 * Server settings for one local user, written to postgresql.conf by initdb and passed on every start (which covers
 * directories created before them). PGlite's wasm heap starts at 128 MB and holds the shared buffers: the default
 * 128 MB of them grow it to 189 MB, 16 MB fit in it.
 */
export const pgliteSettings: readonly string[] = ["shared_buffers=16MB"];

const initdbScript = path.join(import.meta.dirname, "pglite-initdb-process.mjs");
const tempPrefix = (dir: string) => `${path.basename(dir)}.initdb-`;

const exists = (file: string) => stat(file).then(() => true, () => false);

/**
 * Makes `dir` a PGlite data directory if it is not one yet: initdb runs in a child process into a temporary sibling,
 * which is renamed into place once complete, so a crash at any point leaves either no directory or a whole one.
 * A directory that exists without a database (no PG_VERSION) is used only if empty: anything else is refused.
 * All of it under the directory's lock (pglite-lock.ts), `options.lock` if the caller holds it already: a second
 * process fails rather than run initdb beside the first, or remove the temporary directory the first is filling.
 */
export async function ensurePgliteDataDir(
  dir: string,
  settings: readonly string[],
  options: { onInitdbStarted?: (child: ChildProcess) => void; lock?: PgliteDirLock } = {},
): Promise<CreatedDataDir | undefined> {
  const lock = options.lock ?? (await lockPgliteDir(dir));
  try {
    return await ensureLocked(dir, settings, options.onInitdbStarted);
  } finally {
    if (!options.lock) await lock.release();
  }
}

async function ensureLocked(dir: string, settings: readonly string[], onInitdbStarted?: (child: ChildProcess) => void) {
  if (await exists(path.join(dir, "PG_VERSION"))) return undefined;
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [];
    throw err;
  });
  if (entries.length > 0) {
    throw new Error(`${dir} holds files but no PGlite database (no PG_VERSION): move it away or delete it`);
  }
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true });
  // Left by a first start that crashed before its rename (a live one would hold the lock).
  for (const stale of (await readdir(parent)).filter((name) => name.startsWith(tempPrefix(dir)))) {
    await rm(path.join(parent, stale), { recursive: true, force: true });
  }
  const temp = await mkdtemp(path.join(parent, tempPrefix(dir)));
  try {
    const started = performance.now();
    const target = path.join(temp, "data");
    const { peakRssMb } = await runInitdb(target, settings, onInitdbStarted);
    // Replaces `dir` if it is an empty directory (rename(2)), atomically either way.
    await rename(target, dir);
    return { ms: performance.now() - started, initdbPeakRssMb: peakRssMb };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

function runInitdb(target: string, settings: readonly string[], onStarted?: (child: ChildProcess) => void) {
  return new Promise<{ peakRssMb: number }>((resolve, reject) => {
    // Bare node, whatever this process runs under (tsx, vitest): the script is plain JavaScript. Baseline-compiled
    // wasm and a 1 MB young generation: about 130 MB and 15 MB less peak than V8's defaults, and no slower.
    const flags = ["--liftoff-only", "--max-semi-space-size=1"];
    const child = spawn(process.execPath, [...flags, initdbScript, target, JSON.stringify(settings)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    onStarted?.(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code !== 0) {
        reject(new Error(`PGlite initdb failed (${signal ?? `exit ${code}`}): ${stderr.trim().slice(-2000)}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as { peakRssMb: number });
      } catch {
        reject(new Error(`PGlite initdb printed no result: ${stdout.slice(-500)}`));
      }
    });
  });
}
