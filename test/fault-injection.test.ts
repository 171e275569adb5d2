import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "../core/sql/postgres";
import { freshDatabase } from "./support/databases";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy";
import { startTestService, type TestService } from "./support/test-service";

/**
 * The database behind a TCP proxy that refuses, then black-holes, then heals. Timeouts are set small so the suite
 * runs in seconds; production defaults are the variable table's. PGlite is reached over the Postgres wire protocol
 * (pglite-socket), so both engines sit behind the same proxy and the same pg client.
 */
const timeouts = { connectMs: 400, statementMs: 600, deadlineMs: 1_500 };
const healthBudgetMs = 2_000;

type Upstream = { host: string; port: number; database: string; user: string; close(): Promise<void> };

const upstreams: { name: string; start(): Promise<Upstream> }[] = [
  {
    name: "pglite",
    async start() {
      const db = await PGlite.create();
      const socket = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 100 });
      await socket.start();
      const port = Number(socket.getServerConn().split(":").pop());
      // Every socket connection shares PGlite's one session, where a real server gives each its own: a connection
      // that arrives when no other is open starts without the prepared statements of connections now gone.
      const handlers = (socket as unknown as { handlers: Set<unknown> }).handlers;
      socket.addEventListener("connection", () => {
        if (handlers.size === 1) void db.exec("DEALLOCATE ALL").catch(() => {});
      });
      return { host: "127.0.0.1", port, database: "postgres", user: "postgres", close: async () => (await socket.stop(), await db.close()) };
    },
  },
  ...(process.env.TEST_DATABASE_URL
    ? [
        {
          name: "postgres",
          async start() {
            const db = await freshDatabase("postgres");
            const url = new URL(db.url!);
            return { host: url.hostname, port: Number(url.port || 5432), database: url.pathname.slice(1), user: url.username, close: () => db.close() };
          },
        },
      ]
    : []),
];

const timed = async <T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> => {
  const started = performance.now();
  const value = await fn();
  return { ms: Math.round(performance.now() - started), value };
};

describe.each(upstreams)("dependency faults behind a TCP proxy, on $name", (upstream) => {
  let db: Upstream;
  let proxy: TcpProxy;
  let svc: TestService;
  const measured: Record<string, number[]> = {};
  const note = (phase: string, ms: number) => (measured[phase] ??= []).push(ms);

  beforeAll(async () => {
    db = await upstream.start();
    proxy = await startTcpProxy(db);
    const url = `postgres://${db.user}@127.0.0.1:${proxy.port}/${db.database}`;
    svc = await startTestService({
      driver: "node",
      sql: () => openPostgres(url, { connectMs: timeouts.connectMs, statementMs: timeouts.statementMs }),
      env: { SVC_REQUEST_DEADLINE_MS: String(timeouts.deadlineMs) },
    });
  });
  afterAll(async () => {
    // The numbers this suite measured, for whoever tunes the defaults.
    if (process.env.FAULT_TIMINGS) console.log(upstream.name, JSON.stringify(measured));
    await svc?.close();
    await proxy?.close();
    await db?.close();
  });

  const create = (actor: string) => svc.post("/api/v1/posts", { actor, json: { text: `by ${actor}` } });
  const list = (actor: string) => svc.get("/api/v1/posts", { actor });

  /** During a fault: every data route answers 503 SERVICE_UNAVAILABLE within the deadline, /health 200 within 2 s. */
  const expectUnavailableInTime = async (phase: string, rounds = 3) => {
    for (let i = 0; i < rounds; i++) {
      for (const [route, send] of [
        ["create", () => create(`${phase}-${i}`)],
        ["list", () => list(`${phase}-${i}`)],
      ] as const) {
        const { ms, value: res } = await timed(send);
        note(`${phase} ${route}`, ms);
        expect(res.status, `${phase} ${route}`).toBe(503);
        expect(res.json.error.code).toBe("SERVICE_UNAVAILABLE");
        // Bounded, not hung: the deadline answers, its timer late by however long a loaded machine takes.
        expect(ms).toBeLessThan(timeouts.deadlineMs + 2_000);
      }
      const { ms, value: health } = await timed(() => svc.get("/health", { token: null }));
      note(`${phase} health`, ms);
      expect(health.status).toBe(200);
      expect(health.json.data.records).toBe("unavailable");
      expect(ms).toBeLessThan(healthBudgetMs);
    }
  };

  it("data routes answer 503 within the deadline and /health 200 within 2 s while the database refuses, then black-holes; afterwards requests succeed without a restart", async () => {
    expect((await create("before")).status).toBe(201);
    expect((await svc.get("/health", { token: null })).json.data.records).toBe("present");

    await proxy.refuse();
    await expectUnavailableInTime("refused");

    await proxy.blackhole();
    await expectUnavailableInTime("black-holed");

    await proxy.heal();
    await expectServing("healed");

    // Pooled connections that were open when the network went silent: the statement timeouts give up on them.
    await proxy.blackhole();
    await expectUnavailableInTime("black-holed open connections", 1);
    await proxy.heal();
    await expectServing("healed again");
  });

  /** Connections that were stuck are discarded by their timeouts; within a few seconds every request succeeds. */
  const expectServing = async (phase: string) => {
    const healedBy = Date.now() + 5_000;
    let probe;
    while ((probe = await create(`${phase}-probe`)).status !== 201) {
      // Until the pool has replaced its dead connections: 503s. (Over pglite-socket a reconnect can also meet a
      // prepared statement left in PGlite's one shared session, a 500 no real server gives.)
      if (upstream.name === "postgres") expect(probe.status, probe.body.toString()).toBe(503);
      expect(Date.now()).toBeLessThan(healedBy);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (let i = 0; i < 3; i++) {
      expect((await create(`${phase}-${i}`)).status).toBe(201);
      expect((await list(`${phase}-${i}`)).json.data.items).toHaveLength(1);
    }
    expect((await svc.get("/health", { token: null })).json.data.records).toBe("present");
  };
});
