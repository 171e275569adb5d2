/**
 * The benchmark's load runner: keep-alive HTTP requests from this process, `concurrency` workers back to back for
 * BENCH_SECONDS (default 3), and per case its rate, latency quantiles, SQL statements per request (from the
 * server's log lines) and CPU per request: the server's, split into user and system (kernel) time, and this
 * client's own. BENCH_ONLY="get,upload 25" runs only the cases whose names contain one of these.
 */
import { request } from "./http-request";
import type { Server } from "./server-process";

export const benchSeconds = Number(process.env.BENCH_SECONDS ?? 3);

export interface Result {
  name: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  sql: string;
  cpuPerRequest: number;
  /** The server's CPU per request split into user and system (kernel) time, this process's (the client's), and the database's. */
  cpuSplit: { user: number; system: number; client: number; database?: number };
  extra?: string;
}

/** BENCH_ONLY="get,upload 25": run only the cases whose names contain one of these. */
export const selected = (name: string): boolean => {
  const only = process.env.BENCH_ONLY?.split(",");
  return !only || only.some((part) => name.includes(part));
};

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;

/** `concurrency` workers send `make(worker)` requests back to back for `seconds`; every answer must be `expect`. */
export async function load(
  server: Server,
  name: string,
  concurrency: number,
  make: (worker: number) => { method: string; path: string; headers?: Record<string, string>; body?: Buffer },
  expect: number,
  runSeconds = benchSeconds,
  minRequests = 0,
): Promise<Result | undefined> {
  if (!selected(name)) return undefined;
  // Warm up (JIT, connections, plans), then measure.
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => void (await request({ port: server.port, ...make(w) }))));
  server.takeStatements();
  const cpuBefore = await server.cpuMs();
  const databaseBefore = await server.databaseCpuMs?.();
  const clientBefore = process.cpuUsage();
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + runSeconds * 1000;
  let failure: string | undefined;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while ((performance.now() < deadline || latencies.length < minRequests) && !failure) {
        const t = performance.now();
        const res = await request({ port: server.port, ...make(w) });
        latencies.push(performance.now() - t);
        if (res.status !== expect) failure = `${name}: expected ${expect}, got ${res.status} ${res.body.slice(0, 300)}`;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const cpuAfter = await server.cpuMs();
  const databaseAfter = await server.databaseCpuMs?.();
  const cpu = cpuAfter.total - cpuBefore.total;
  if (failure) throw new Error(failure);
  latencies.sort((a, b) => a - b);
  const counts = [...server.takeStatements().values()].flat();
  const sql = counts.length ? (counts.reduce((a, b) => a + b, 0) / counts.length).toFixed(2) : "?";
  return { name, requests: latencies.length, perSecond: latencies.length / elapsed, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), sql,
    cpuPerRequest: cpu / latencies.length,
    cpuSplit: {
      user: (cpuAfter.user - cpuBefore.user) / latencies.length,
      system: (cpuAfter.system - cpuBefore.system) / latencies.length,
      client: (client.user + client.system) / 1000 / latencies.length,
      database: databaseBefore === undefined || databaseAfter === undefined ? undefined : (databaseAfter - databaseBefore) / latencies.length,
    },
  };
}


/** One table per backend: a line per case. */
export const printResults = (backend: string, results: Result[]) => {
  console.log(`\n${backend}`);
  const database = results.some((r) => r.cpuSplit.database !== undefined);
  console.log(
    `${"case".padEnd(24)}${"req/s".padStart(9)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"SQL/req".padStart(9)}${"CPU ms/req".padStart(12)}` +
      (database ? `${"DB ms/req".padStart(11)}` : "") + `${"client ms/req".padStart(15)}`,
  );
  for (const r of results) {
    const db = (database ? (r.cpuSplit.database?.toFixed(2) ?? "").padStart(11) : "") + r.cpuSplit.client.toFixed(2).padStart(15);
    console.log(
      `${r.name.padEnd(24)}${r.perSecond.toFixed(0).padStart(9)}${r.p50.toFixed(1).padStart(9)}${r.p99.toFixed(1).padStart(9)}${r.sql.padStart(9)}${r.cpuPerRequest.toFixed(2).padStart(12)}${db}  ${r.extra ?? ""}`,
    );
  }
};


