import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "./support/databases";
import { startDidServer } from "./support/did-server";
import { nodeServerOnFreePort } from "./support/node-server-process";

const token = "shared-limit-token-0123456789abcdef0123456789";

/** Two Node hosts (real processes, as `npm start` runs them) sharing one Postgres enforce one limit together. */
describe.skipIf(!process.env.TEST_DATABASE_URL)("two server processes sharing one Postgres", () => {
  let db: TestDatabase;
  let dids: Awaited<ReturnType<typeof startDidServer>>;
  let blobDir: string;
  const servers: { child: ChildProcess; url: string }[] = [];

  beforeAll(async () => {
    db = await freshDatabase("postgres");
    dids = await startDidServer();
    dids.publish("shared", "pds.test");
    blobDir = await mkdtemp(path.join(tmpdir(), "svc-shared-"));
    for (let i = 0; i < 2; i++) servers.push(await startServer({ databaseUrl: db.url!, did: dids.didOf("shared"), blobDir }));
    // A third whose clock runs a whole write window (15 minutes) and a second ahead of the others'.
    servers.push(await startServer({ databaseUrl: db.url!, did: dids.didOf("shared"), blobDir, skewMs: 901_000 }));
  }, 90_000);

  afterAll(async () => {
    for (const { child } of servers) child.kill("SIGTERM");
    await Promise.all(servers.map(({ child }) => new Promise((resolve) => child.once("exit", resolve))));
    await dids?.close();
    await db?.close();
    if (blobDir) await rm(blobDir, { recursive: true, force: true });
  });

  it("enforce one write limit together: 30 concurrent creates for one actor across both processes allow exactly 10", async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${servers[i % 2]!.url}/api/v1/posts`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "x-svc-acting-actor": "racer", "content-type": "application/json" },
          body: JSON.stringify({ text: `post ${i}` }),
        }).then((r) => r.status),
      ),
    );
    expect(results.filter((s) => s === 201)).toHaveLength(10);
    expect(results.filter((s) => s === 429)).toHaveLength(20);
  });

  it("a process whose clock runs ahead opens no window of its own: the limits are measured on the database's clock", async () => {
    const write = (server: { url: string }) =>
      fetch(`${server.url}/api/v1/posts`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "x-svc-acting-actor": "skewed", "content-type": "application/json" },
        body: JSON.stringify({ text: "on time" }),
      }).then((r) => r.status);
    for (let i = 0; i < 10; i++) expect(await write(servers[0]!)).toBe(201);
    // On its own clock the ten writes left the window a second ago; on the database's they are still in it.
    expect(await write(servers[2]!)).toBe(429);
  });

  it("both processes migrated the one database once, concurrently, and read each other's writes", async () => {
    const [row] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM schema_migrations");
    expect(row!.n).toBeGreaterThan(0);
    const list = await fetch(`${servers[1]!.url}/api/v1/posts`, { headers: { authorization: `Bearer ${token}`, "x-svc-acting-actor": "racer" } });
    expect((await list.json()).data.items).toHaveLength(10);
  });
});

const startServer = async (opts: { databaseUrl: string; did: string; blobDir: string; skewMs?: number }) => {
  const { port, start } = await nodeServerOnFreePort();
  const skewed = opts.skewMs === undefined ? {} : { nodeArgs: ["--import", path.resolve(import.meta.dirname, "support/skewed-clock.mjs")] };
  const child = start({
    PATH: process.env.PATH,
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    DATABASE_URL: opts.databaseUrl,
    SVC_BLOB_DIR: opts.blobDir,
    SVC_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    SVC_PDS_HOST: "pds.test",
    SVC_PLAYBACK_SIGNING_KEY: "shared-playback-signing-key-0123456789abcdef",
    SVC_APP_TOKENS: `shared:${token}`,
    SVC_APP_DIDS: `shared:${opts.did}`,
    ...(opts.skewMs === undefined ? {} : { SVC_TEST_CLOCK_SKEW_MS: String(opts.skewMs) }),
  }, skewed);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 45_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"message":"listening"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    child.once("exit", (code) => reject(new Error(`server exited ${code}:\n${output}`)));
  });
  child.stdout!.resume();
  return { child, url: `http://127.0.0.1:${port}` };
};
