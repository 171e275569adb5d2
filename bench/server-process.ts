/**
 * The benchmarked server: `npm start`'s process on an address this process bound and handed over (the port its
 * configuration names never goes free), with what the benchmark reads of it: SQL statements per invocation from
 * its own log lines, its peak RSS (VmHWM), its CPU time split into user and system, and while it starts the memory of
 * its whole process tree (the server and any process it spawns, such as a one-time initdb), sampled with each
 * `/health` poll. Start time is spawn to the first healthy `/health`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { nodeServerOnFreePort } from "../test/support/node-server-process";
import { request } from "./http-request";

/** The service token of the benchmark's one tenant. */
export const benchToken = `bench-token-${randomBytes(16).toString("hex")}`;

export interface Server {
  child: ChildProcess;
  port: number;
  startMs: number;
  /** While starting, the largest sum of VmRSS over the server's process tree, and of VmHWM (an upper bound). */
  startTree: TreeMemory;
  /** sqlStatements per invocation name, from the log lines since the last `takeStatements`. */
  takeStatements(): Map<string, number[]>;
  peakRssMb(): Promise<number>;
  /** CPU time the server process has used so far, in ms: user, system (kernel) and their sum. */
  cpuMs(): Promise<CpuMs>;
  /** CPU time the database's own processes have used so far, in ms, where the benchmark can read it (Postgres). */
  databaseCpuMs?(): Promise<number>;
  stop(): Promise<void>;
}

export interface CpuMs {
  user: number;
  system: number;
  total: number;
}

export interface TreeMemory {
  rssMb: number;
  hwmBoundMb: number;
}

/** Memory of `pid` and its descendants now: the sum of their RSS, and of their peaks (which bounds the tree's peak). */
async function treeMemory(pid: number): Promise<TreeMemory> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // Field 4 of stat(5), after the parenthesised command name.
    if (stat) parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  const total: TreeMemory = { rssMb: 0, hwmBoundMb: 0 };
  for (const member of tree) {
    const status = await readFile(`/proc/${member}/status`, "utf8").catch(() => "");
    total.rssMb += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
    total.hwmBoundMb += Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  }
  return total;
}

/** Starts the server of the checkout `root` on `databaseUrl` and `blobDir`, and waits until `/health` answers 200. */
export async function startServer(root: string, databaseUrl: string, blobDir: string): Promise<Server> {
  const { port, start } = await nodeServerOnFreePort();
  const host = `localhost:${port}`;
  const env = {
    ...process.env,
    NODE_ENV: "development",
    DATABASE_URL: databaseUrl,
    SVC_BLOB_DIR: blobDir,
    SVC_PUBLIC_BASE_URL: `http://${host}`,
    SVC_PDS_HOST: host,
    SVC_PLAYBACK_SIGNING_KEY: randomBytes(32).toString("hex"),
    SVC_APP_TOKENS: `bench:${benchToken}`,
    SVC_APP_DIDS: `bench:did:web:${encodeURIComponent(host)}`,
    SYSTEM_AUTH_TOKEN: randomBytes(32).toString("hex"),
    TRUSTED_PROXY_HOPS: "1",
    LOG_LEVEL: "info",
  };
  const started = performance.now();
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = start(env, { root, nodeArgs, stderr: "inherit" });
  let statements = new Map<string, number[]>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.includes('"sqlStatements"')) return;
    try {
      const entry = JSON.parse(line) as { invocation?: string; sqlStatements?: number };
      const list = statements.get(entry.invocation ?? "?") ?? [];
      list.push(entry.sqlStatements ?? 0);
      statements.set(entry.invocation ?? "?", list);
    } catch {
      // Not a log line of ours.
    }
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Never leave a server behind, whatever ends this process.
  process.once("exit", () => child.kill("SIGKILL"));
  const startTree: TreeMemory = { rssMb: 0, hwmBoundMb: 0 };
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before it was healthy`);
    const tree = await treeMemory(child.pid!);
    startTree.rssMb = Math.max(startTree.rssMb, tree.rssMb);
    startTree.hwmBoundMb = Math.max(startTree.hwmBoundMb, tree.hwmBoundMb);
    const status = await request({ port, method: "GET", path: "/health" }).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) break;
    // Polled, not slept on: the loop ends on the first 200.
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const startMs = performance.now() - started;
  statements = new Map();
  return {
    child,
    port,
    startMs,
    startTree,
    takeStatements() {
      const taken = statements;
      statements = new Map();
      return taken;
    },
    peakRssMb: () => peakRssMb(child.pid!),
    cpuMs: () => cpuMs(child.pid!),
    async stop() {
      child.kill("SIGINT");
      await exited;
    },
  };
}

const peakRssMb = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};

const cpuMs = async (pid: number): Promise<CpuMs> => {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 10 ms.
  const user = Number(fields[11]) * 10;
  const system = Number(fields[12]) * 10;
  return { user, system, total: user + system };
};

/**
 * The floor server (floor-server.ts) of the service's tenant `appId` on `databaseUrl`, measured like the service:
 * one statement per request, its CPU and peak RSS.
 */
export async function startFloorServer(root: string, databaseUrl: string, appId: string): Promise<Server> {
  const started = performance.now();
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", path.join(root, "bench/floor-server.ts")], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, FLOOR_APP_ID: appId },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  process.once("exit", () => child.kill("SIGKILL"));
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    lines.once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once("exit", (code) => reject(new Error(`the floor server exited with ${code} before it listened`)));
  });
  return {
    child,
    port,
    startMs: performance.now() - started,
    startTree: { rssMb: 0, hwmBoundMb: 0 },
    takeStatements: () => new Map([["floor", [1]]]),
    peakRssMb: () => peakRssMb(child.pid!),
    cpuMs: () => cpuMs(child.pid!),
    async stop() {
      child.kill("SIGINT");
      await exited;
    },
  };
}
