/**
 * HTTP load benchmark of the Node host (`npm run bench`; CI does not run it). It starts `core/runtime/node/node-server.ts`
 * as a child process on PGlite (a fresh data directory, then restarted on it) and, when TEST_DATABASE_URL is set,
 * on a fresh Postgres database, and drives it over keep-alive HTTP the way clients do: create c=1 and c=16, get
 * c=1 and c=16, list c=16, and multipart uploads of real MP3 audio (64 KiB to 25 MiB) next to SHA-256 of the same
 * bytes. Rate limits stay on: every request has a fresh actor and a fresh X-Forwarded-For (TRUSTED_PROXY_HOPS=1).
 * SQL statements per request come from the server's own log line (`sqlStatements`); memory is the server's peak
 * RSS (VmHWM) and, while it starts, that of its whole process tree (the server and any process it spawns, such as
 * a one-time initdb), sampled with each `/health` poll; start time is spawn to the first healthy `/health`. CPU ms/req is the server process's own CPU time
 * per request (not the database's, on Postgres): on a shared machine it moves less than req/s does. Upload lines
 * also split it into user and system (kernel: loopback TCP, page-cache writes, fsync) time, next to the CPU this
 * client process spent per request on the same cores.
 *
 *   npm run bench                       # unit benches, then this
 *   npx tsx bench/http-load.ts          # this alone; BENCH_SECONDS=5 for longer runs
 *   BENCH_ONLY=upload BENCH_UPLOAD_CONCURRENCY=1 npx tsx bench/http-load.ts   # uploads one at a time (default 2)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";
import { encodedNoise } from "../test/support/audio-fixtures";

/** The checkout whose server is measured (BENCH_ROOT: another one, to compare a change against its parent). */
const root = process.env.BENCH_ROOT ?? path.resolve(import.meta.dirname, "..");
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const token = `bench-token-${randomBytes(16).toString("hex")}`;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });

let sequence = 0;
const fresh = () => {
  const n = ++sequence;
  return { actor: `bench-${n}`, ip: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` };
};

interface Server {
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
  stop(): Promise<void>;
}

interface CpuMs {
  user: number;
  system: number;
  total: number;
}

interface TreeMemory {
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

async function startServer(databaseUrl: string, blobDir: string): Promise<Server> {
  const port = await freePort();
  const host = `localhost:${port}`;
  const env = {
    ...process.env,
    NODE_ENV: "development",
    DATABASE_URL: databaseUrl,
    SVC_BLOB_DIR: blobDir,
    SVC_PUBLIC_BASE_URL: `http://${host}`,
    SVC_PDS_HOST: host,
    SVC_PLAYBACK_SIGNING_KEY: randomBytes(32).toString("hex"),
    SVC_APP_TOKENS: `bench:${token}`,
    SVC_APP_DIDS: `bench:did:web:${encodeURIComponent(host)}`,
    SYSTEM_AUTH_TOKEN: randomBytes(32).toString("hex"),
    TRUSTED_PROXY_HOPS: "1",
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
  };
  const started = performance.now();
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", path.join(root, "core/runtime/node/node-server.ts")], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
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
    async peakRssMb() {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
    },
    async cpuMs() {
      const stat = await readFile(`/proc/${child.pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 10 ms.
      const user = Number(fields[11]) * 10;
      const system = Number(fields[12]) * 10;
      return { user, system, total: user + system };
    },
    async stop() {
      child.kill("SIGINT");
      await exited;
    },
  };
}

const agents = new Map<number, http.Agent>();
const agentFor = (port: number) => {
  let agent = agents.get(port);
  if (!agent) agents.set(port, (agent = new http.Agent({ keepAlive: true, maxSockets: 64 })));
  return agent;
};

function request(options: { port: number; method: string; path: string; headers?: Record<string, string>; body?: Buffer }) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: options.port, method: options.method, path: options.path, headers: options.headers, agent: agentFor(options.port) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

interface Result {
  name: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  sql: string;
  cpuPerRequest: number;
  /** The server's CPU per request split into user and system (kernel) time, and this process's (the client's). */
  cpuSplit: { user: number; system: number; client: number };
  extra?: string;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;

/** `concurrency` workers send `make(worker)` requests back to back for `seconds`; every answer must be `expect`. */
async function load(
  server: Server,
  name: string,
  concurrency: number,
  make: (worker: number) => { method: string; path: string; headers?: Record<string, string>; body?: Buffer },
  expect: number,
  runSeconds = seconds,
  minRequests = 0,
): Promise<Result | undefined> {
  // BENCH_ONLY="get,upload 25": run only the cases whose names contain one of these.
  const only = process.env.BENCH_ONLY?.split(",");
  if (only && !only.some((part) => name.includes(part))) return undefined;
  // Warm up (JIT, connections, plans), then measure.
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => void (await request({ port: server.port, ...make(w) }))));
  server.takeStatements();
  const cpuBefore = await server.cpuMs();
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
    },
  };
}

const authed = (extra: Record<string, string> = {}) => {
  const { actor, ip } = fresh();
  return { authorization: `Bearer ${token}`, "x-svc-acting-actor": actor, "x-forwarded-for": ip, ...extra };
};

const postBody = (i: number) => Buffer.from(JSON.stringify({ text: `bench post ${i} ${"lorem ipsum ".repeat(8)}` }));

function multipart(bytes: Buffer, type: string): { body: Buffer; contentType: string } {
  const boundary = `----bench${randomBytes(8).toString("hex")}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip"\r\nContent-Type: ${type}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, bytes, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Real 320 kb/s MP3 without a Xing header, cut to exactly `size` bytes (a truncated last frame is what users send too). */
async function mp3Of(size: number): Promise<Buffer> {
  const seconds = Math.ceil((size * 8) / 320_000) + 1;
  const fixture = await encodedNoise(`bench-mp3-${seconds}s`, "audio/mpeg", seconds, [
    "-c:a", "libmp3lame", "-b:a", "320k", "-write_xing", "0", "-id3v2_version", "0", "-f", "mp3",
  ]);
  return fixture.bytes.subarray(0, size);
}

function sha256MiBps(bytes: Buffer): number {
  createHash("sha256").update(bytes).digest();
  const runs = Math.max(3, Math.ceil(64 * 1024 * 1024 / bytes.length));
  const t = performance.now();
  for (let i = 0; i < runs; i++) createHash("sha256").update(bytes).digest();
  return (bytes.length * runs) / (1024 * 1024) / ((performance.now() - t) / 1000);
}

/** BENCH_UPLOAD_FILES="a.m4a=audio/m4a,b.ogg=audio/ogg": also upload these files (each type at its real size). */
const extraUploads = async (): Promise<[string, Buffer, string][]> =>
  Promise.all(
    (process.env.BENCH_UPLOAD_FILES ?? "")
      .split(",")
      .filter(Boolean)
      .map(async (entry) => {
        const [file, type] = entry.split("=") as [string, string];
        return [path.basename(file), await readFile(file), type] as [string, Buffer, string];
      }),
  );

async function uploads(server: Server, sizes: [string, number][]): Promise<(Result | undefined)[]> {
  const results: (Result | undefined)[] = [];
  const cases: [string, Buffer, string][] = [];
  for (const [label, size] of sizes) cases.push([label, await mp3Of(size), "audio/mpeg"]);
  cases.push(...(await extraUploads()));
  for (const [label, bytes, type] of cases) {
    const size = bytes.length;
    const { body, contentType } = multipart(bytes, type);
    // Each upload differs in a few bytes in the middle of the file (payload, not a header), so every one is a new
    // CID: a real stage, fsync and rename, never the cheaper already-stored path.
    // Each worker owns a body built before the clock starts, changed in place between its own requests (never
    // while one is in flight), so the client sends from memory it already has and copies nothing.
    const middle = body.indexOf(bytes.subarray(0, 64)) + Math.floor(size / 2);
    const concurrency = Number(process.env.BENCH_UPLOAD_CONCURRENCY ?? 2);
    const bodies = Array.from({ length: concurrency }, () => Buffer.from(body));
    let n = 0;
    const runSeconds = size > 4 * 1024 * 1024 ? Math.max(seconds, 4) : seconds;
    const result = await load(
      server,
      `upload ${label}`,
      concurrency,
      (worker) => {
        const own = bodies[worker]!;
        own.writeUInt32BE(++n, middle);
        return { method: "POST", path: "/api/v1/audio/upload", headers: authed({ "content-type": contentType }), body: own };
      },
      201,
      runSeconds,
      6,
    );
    if (!result) continue;
    const mibps = (result.perSecond * size) / (1024 * 1024);
    const sha = sha256MiBps(bytes);
    const { user, system, client } = result.cpuSplit;
    result.extra =
      `${mibps.toFixed(0)} MiB/s; SHA-256 ${sha.toFixed(0)} MiB/s (${((100 * mibps) / sha).toFixed(0)}%); ` +
      `server CPU ${user.toFixed(0)} user + ${system.toFixed(0)} sys, client ${client.toFixed(0)} ms/req`;
    results.push(result);
  }
  return results;
}

async function runAll(server: Server): Promise<Result[]> {
  const results: (Result | undefined)[] = [];
  let i = 0;
  const create = () => ({ method: "POST", path: "/api/v1/posts", headers: authed({ "content-type": "application/json" }), body: postBody(++i) });
  results.push(await load(server, "create c=1", 1, create, 201));
  results.push(await load(server, "create c=16", 16, create, 201));
  const ids: string[] = [];
  for (let k = 0; k < 50; k++) {
    const res = await request({ port: server.port, ...create() });
    const created = JSON.parse(res.body) as { data?: { postId?: string }; postId?: string };
    const id = created.data?.postId ?? created.postId;
    if (!id) throw new Error(`create answered ${res.status} ${res.body.slice(0, 300)}`);
    ids.push(id);
  }
  let g = 0;
  const get = () => ({ method: "GET", path: `/api/v1/posts/${ids[g++ % ids.length]}`, headers: authed() });
  results.push(await load(server, "get c=1", 1, get, 200));
  results.push(await load(server, "get c=16", 16, get, 200));
  results.push(await load(server, "list (limit 20) c=16", 16, () => ({ method: "GET", path: "/api/v1/posts?limit=20", headers: authed() }), 200));
  results.push(
    ...(await uploads(server, [
      ["64 KiB", 64 * 1024],
      ["1 MiB", 1024 * 1024],
      ["5 MiB", 5 * 1024 * 1024],
      ["25 MiB", 25 * 1024 * 1024],
    ])),
  );
  return results.filter((result) => result !== undefined);
}

const print = (backend: string, results: Result[]) => {
  console.log(`\n${backend}`);
  console.log(`${"case".padEnd(24)}${"req/s".padStart(9)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"SQL/req".padStart(9)}${"CPU ms/req".padStart(12)}`);
  for (const r of results) {
    console.log(
      `${r.name.padEnd(24)}${r.perSecond.toFixed(0).padStart(9)}${r.p50.toFixed(1).padStart(9)}${r.p99.toFixed(1).padStart(9)}${r.sql.padStart(9)}${r.cpuPerRequest.toFixed(2).padStart(12)}  ${r.extra ?? ""}`,
    );
  }
};

/** Every case against a started server, then its peak RSS; the server is stopped either way. */
async function measure(server: Server) {
  try {
    const results = await runAll(server);
    return { results, rss: await server.peakRssMb() };
  } finally {
    await server.stop();
  }
}

async function pglite() {
  const dir = await mkdtemp(path.join(tmpdir(), "bench-pglite-"));
  try {
    const url = `pglite://${path.join(dir, "pg")}`;
    const first = await startServer(url, path.join(dir, "blobs"));
    const firstRss = await first.peakRssMb();
    await first.stop();
    const server = await startServer(url, path.join(dir, "blobs"));
    const restartRss = await server.peakRssMb();
    const { results, rss } = await measure(server);
    print("PGlite", results);
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
    const server = await startServer(url.toString(), path.join(dir, "blobs"));
    const { results, rss } = await measure(server);
    print("Postgres", results);
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
for (const agent of agents.values()) agent.destroy();
