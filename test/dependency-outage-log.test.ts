import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase } from "./support/databases";
import { hostProcesses, type HostProcess } from "./support/host-process";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy";

/** The database a real host reaches through a proxy that can refuse and black-hole: Postgres when there is one. */
const startDatabase = async () => {
  if (process.env.TEST_DATABASE_URL) {
    const db = await freshDatabase("postgres");
    const url = new URL(db.url!);
    return { host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1), user: url.username, close: () => db.close() };
  }
  const db = await PGlite.create();
  const socket = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 100 });
  await socket.start();
  const port = Number(socket.getServerConn().split(":").pop());
  return { host: "127.0.0.1", port, database: "postgres", user: "postgres", close: async () => (await socket.stop(), await db.close()) };
};

describe("the host's log during a database outage (a real host process)", () => {
  let db: Awaited<ReturnType<typeof startDatabase>>;
  let proxy: TcpProxy;
  let hosts: Awaited<ReturnType<typeof hostProcesses>>;
  let host: HostProcess;

  beforeAll(async () => {
    db = await startDatabase();
    proxy = await startTcpProxy(db);
    hosts = await hostProcesses();
    host = await hosts.start({
      DATABASE_URL: `postgres://${db.user}@127.0.0.1:${proxy.port}/${db.database}`,
      SVC_BLOB_DIR: "/tmp/outage-log-unused-blobs",
      SVC_DB_CONNECT_TIMEOUT_MS: "300",
      SVC_DB_STATEMENT_TIMEOUT_MS: "500",
      SVC_REQUEST_DEADLINE_MS: "5000",
    });
  }, 60_000);
  afterAll(async () => {
    await hosts?.close();
    await proxy?.close();
    await db?.close();
  });

  const create = (actor: string) =>
    host.fetch("/api/v1/posts", { method: "POST", actor, headers: { "content-type": "application/json" }, body: JSON.stringify({ text: `by ${actor}` }) });
  const list = (actor: string) => host.fetch("/api/v1/posts", { actor });

  it("a dependency outage is logged as one warning without a stack when it goes down and one when it comes back, with the count of requests it failed; each request's own line keeps its status", async () => {
    expect((await create("before")).status).toBe(201);
    const from = host.lines.length;

    await proxy.refuse();
    let failed = 0;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all([create(`down-${round}-a`), create(`down-${round}-b`), list(`down-${round}`), list(`down-${round}-c`)]);
      for (const answer of answers) expect(answer.status).toBe(503);
      failed += answers.length;
    }
    await proxy.blackhole();
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all([create(`silent-${round}`), list(`silent-${round}`)]);
      for (const answer of answers) expect(answer.status).toBe(503);
      failed += answers.length;
    }
    await proxy.heal();
    let back;
    while ((back = await create(`after-${Date.now()}`)).status !== 201) {
      expect(back.status).toBe(503);
      failed += 1;
    }
    await host.waitForLine((line) => line.message === "dependency available again", { from });

    const during = host.lines.slice(from);
    const requests = during.filter((line) => line.message === "request");
    expect(requests.filter((line) => line.status === 503 && line.errorCode === "SERVICE_UNAVAILABLE")).toHaveLength(failed);
    const others = during.filter((line) => line.message !== "request");
    expect(others.length, JSON.stringify(others, null, 1)).toBeLessThan(10);
    expect(others.filter((line) => line.level === "ERROR")).toEqual([]);
    const down = others.filter((line) => line.message === "dependency unavailable");
    expect(down).toEqual([expect.objectContaining({ level: "WARN", dependency: "database" })]);
    expect(down[0]).not.toHaveProperty("error");
    const up = others.filter((line) => line.message === "dependency available again");
    expect(up).toEqual([expect.objectContaining({ level: "WARN", dependency: "database", failedRequests: failed })]);
    expect(up[0]!.outageMs).toEqual(expect.any(Number));
  }, 120_000);
});
