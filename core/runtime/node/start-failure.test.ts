import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockPgliteDir } from "../../sql/pglite-lock";

const root = path.resolve(import.meta.dirname, "../../..");
// A start on embedded Postgres takes 4 s on this machine when quiet and passed 20 s under a loaded CI: the deadline
// only tells a hang from a slow start, so it is generous, and each test's timeout is above it.
const deadlineMs = 60_000;
const testTimeoutMs = deadlineMs + 10_000;
let dir: string;
let held: Server;
let heldPort: number;
let closedPort: number;

const listen = async (): Promise<Server> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "svc-start-failure-"));
  held = await listen();
  heldPort = (held.address() as AddressInfo).port;
  const closed = await listen();
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
});
afterAll(async () => {
  held.close();
  await rm(dir, { recursive: true, force: true });
});

/** The entry point as npm runs it, until it exits or the deadline passes (then it is killed and `code` is null). */
async function run(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "test", LOG_LEVEL: "info", HOST: "127.0.0.1", SVC_BLOB_DIR: path.join(dir, "blobs"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), deadlineMs);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearTimeout(timer);
  const lines = output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { level: string; message: string; error?: { message: string } });
  return { code, output, lines };
}

const expectStartFailed = ({ code, output, lines }: Awaited<ReturnType<typeof run>>, cause: RegExp) => {
  expect(code, output).toBe(1);
  const errors = lines.filter((line) => line.level === "ERROR");
  expect(errors.map((line) => line.message), output).toEqual(["start-up failed"]);
  expect(errors[0]!.error?.message).toMatch(cause);
  expect(lines.some((line) => /listening/.test(line.message)), output).toBe(false);
};

describe("a start that fails after the configuration check", () => {
  const api = { DATABASE_URL: "pglite://memory", SVC_PUBLIC_BASE_URL: "http://localhost:3000", SVC_PDS_HOST: "localhost:3000", SVC_PLAYBACK_SIGNING_KEY: "p".repeat(40) };

  it.each([
    ["", {}],
    [" (with PROCESSING_QUEUE_URL, whose consumer kept the process up, not listening)", { PROCESSING_QUEUE_URL: "http://127.0.0.1:1/queue" }],
  ])("npm start on a port another socket holds logs the start's failure once at error level and exits 1%s", async (_label, extra) => {
    expectStartFailed(await run("core/runtime/node/node-server.ts", { ...api, PORT: String(heldPort), ...extra }), /EADDRINUSE/);
  }, testTimeoutMs);

  it("npm start with the database down (DATABASE_URL to a closed port) logs the start's failure once at error level and exits 1", async () => {
    const result = await run("core/runtime/node/node-server.ts", { ...api, PORT: "0", DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/svc` });
    expectStartFailed(result, /ECONNREFUSED/);
  }, testTimeoutMs);

  it("npm start on a PGlite directory another live process holds (a second npm start) logs the start's failure naming the lock and exits 1", async () => {
    const pg = path.join(dir, "pg");
    const lock = await lockPgliteDir(pg); // as the first npm start holds it, here without its seconds of initdb
    try {
      const result = await run("core/runtime/node/node-server.ts", { ...api, PORT: "0", DATABASE_URL: `pglite://${pg}` });
      expectStartFailed(result, new RegExp(`^PGlite data directory ${pg} is in use by process ${process.pid} \\(lock file ${pg}\\.lock\\)`));
    } finally {
      await lock.release();
    }
  }, testTimeoutMs);

  it("npm run rendition on a port another socket holds logs the start's failure once at error level and exits 1", async () => {
    const result = await run("core/rendition/rendition-main.ts", { RENDITION_PORT: String(heldPort), SYSTEM_AUTH_TOKEN: "s".repeat(40) });
    expectStartFailed(result, /EADDRINUSE/);
  }, testTimeoutMs);
});
