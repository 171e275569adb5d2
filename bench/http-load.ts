/**
 * HTTP load benchmark of the Node host (`npm run bench`; CI does not run it). It starts `npm start`'s process
 * (server-process.ts) on PGlite (a fresh data directory, then restarted on it) and, when TEST_DATABASE_URL is set,
 * on a fresh Postgres database, runs the cases (http-cases.ts) over keep-alive HTTP the way clients do
 * (load-runner.ts), and prints a table per backend with start time and memory beneath it.
 *
 *   npm run bench                       # unit benches, then this
 *   npx tsx bench/http-load.ts          # this alone; BENCH_SECONDS=5 for longer runs
 *   BENCH_ONLY=upload BENCH_UPLOAD_CONCURRENCY=1 npx tsx bench/http-load.ts   # uploads one at a time (default 2)
 *   BENCH_BACKEND=pglite (or postgres)  # one backend only
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { databaseCpu } from "./database-cpu";
import { runAll } from "./http-cases";
import { closeConnections } from "./http-request";
import { printResults } from "./load-runner";
import { startFloorServer, startServer, type Server, type TreeMemory } from "./server-process";

/** The checkout whose server is measured (BENCH_ROOT: another one, to compare a change against its parent). */
const root = process.env.BENCH_ROOT ?? path.resolve(import.meta.dirname, "..");

/** Every case against a started server, then its peak RSS; the server is stopped either way. */
async function measure(server: Server, floor?: () => Promise<Server>) {
  try {
    const results = await runAll(server, floor);
    return { results, rss: await server.peakRssMb() };
  } finally {
    await server.stop();
  }
}

async function pglite() {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-pglite-"));
  try {
    const url = `pglite://${path.join(dir, "pg")}`;
    const first = await startServer(root, url, path.join(dir, "blobs"));
    const firstRss = await first.peakRssMb();
    await first.stop();
    const server = await startServer(root, url, path.join(dir, "blobs"));
    const restartRss = await server.peakRssMb();
    const { results, rss } = await measure(server);
    printResults("PGlite", results);
    const tree = (t: TreeMemory) => `process tree ${t.rssMb.toFixed(0)} MB sampled, at most ${t.hwmBoundMb.toFixed(0)} MB`;
    console.log(
      `start to healthy: ${first.startMs.toFixed(0)} ms on an empty directory (peak RSS: server ${firstRss.toFixed(0)} MB, ${tree(first.startTree)}), ` +
        `${server.startMs.toFixed(0)} ms on an existing one (server ${restartRss.toFixed(0)} MB, ${tree(server.startTree)}); peak RSS serving ${rss.toFixed(0)} MB`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function postgres(adminUrl: string) {
  const name = `svc_bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const dir = await mkdtemp(path.join(tmpdir(), "bench-postgres-"));
  try {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const databaseCpuMs = databaseCpu(admin, name);
    const server = Object.assign(await startServer(root, url.toString(), path.join(dir, "blobs")), { databaseCpuMs });
    const floor = async () => Object.assign(await startFloorServer(root, url.toString(), "bench"), { databaseCpuMs });
    const { results, rss } = await measure(server, floor);
    printResults("Postgres", results);
    console.log(`start to healthy: ${server.startMs.toFixed(0)} ms on an empty database; peak RSS serving ${rss.toFixed(0)} MB`);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  }
}

const only = process.env.BENCH_BACKEND;
if (only !== "postgres") await pglite();
if (process.env.TEST_DATABASE_URL && only !== "pglite") await postgres(process.env.TEST_DATABASE_URL);
closeConnections();
