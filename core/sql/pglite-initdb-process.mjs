// Runs PGlite's initdb in a process of its own and writes the new data directory to argv[2] (which must not exist),
// then prints {"peakRssMb": n}. PGlite 0.5 runs initdb in a second wasm instance plus a 128 MB copy of its heap
// (≈330 MB over one instance): done here, the server never holds them, and the memory goes back when this exits.
// Plain JavaScript, spawned with bare node (no tsx) and V8 flags that keep its peak low (see pglite-data-dir.ts).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";

const [target, settingsJson] = process.argv.slice(2);
if (!target) throw new Error("usage: pglite-initdb-process.mjs <new directory> [settings JSON]");
/** @type {string[]} name=value server settings, kept in postgresql.conf by initdb's --set. */
const settings = JSON.parse(settingsJson ?? "[]");

// In memory, initdb writes straight into this instance's filesystem (no tarball of the directory in between).
const db = await PGlite.create({
  initDbStartParams: settings.flatMap((setting) => ["--set", setting]),
  startParams: [...PGlite.defaultStartParams, ...settings.flatMap((setting) => ["-c", setting])],
});
const fs = db.Module.FS;
// Closing checkpoints, so the copy is a cleanly shut down cluster; the in-memory files outlive the instance.
await db.close();

/** @param {string} from @param {string} to */
const copy = async (from, to) => {
  await mkdir(to, { mode: 0o700 });
  for (const name of fs.readdir(from)) {
    if (name === "." || name === "..") continue;
    const source = `${from}/${name}`;
    if (fs.isDir(fs.stat(source).mode)) await copy(source, path.join(to, name));
    else await writeFile(path.join(to, name), fs.readFile(source), { mode: 0o600 });
  }
};
await copy(PGlite.paths.PGDATA, target);

process.stdout.write(`${JSON.stringify({ peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`);
