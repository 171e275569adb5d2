import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { backends, type TestDatabase } from "./support/databases";
import { faultySql } from "./support/faulty-sql";
import { startTestService, type TestService } from "./support/test-service";

/** Each error as the backend's own client throws it when its database is unavailable. */
const faults: [string, () => unknown][] = [
  ["a refused connection (ECONNREFUSED)", () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })],
  ["a reset connection (ECONNRESET)", () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })],
  ["SQLSTATE 55000 (ALLOW_CONNECTIONS false)", () => Object.assign(new Error('database "x" is not currently accepting connections'), { code: "55000" })],
  ["SQLSTATE 08006 (connection failure)", () => Object.assign(new Error("connection failure"), { code: "08006" })],
  ["SQLSTATE 53300 (too many connections)", () => Object.assign(new Error("sorry, too many clients already"), { code: "53300" })],
  ["SQLSTATE 57P01 (admin shutdown)", () => Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" })],
  ["SQLSTATE 57P03 (cannot connect now)", () => Object.assign(new Error("the database system is starting up"), { code: "57P03" })],
  ["SQLSTATE 57014 (statement timeout)", () => Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" })],
  ["pg's connection timeout", () => new Error("Connection terminated due to connection timeout")],
  ["pg's query read timeout", () => new Error("Query read timeout")],
  ["PGlite closed", () => new Error("PGlite is closed")],
  ["Data API DatabaseResumingException", () => Object.assign(new Error("The database is resuming"), { name: "DatabaseResumingException", $fault: "client" })],
  ["Data API throttling", () => Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException", $fault: "client" })],
  ["Data API statement timeout", () => Object.assign(new Error("timed out"), { name: "StatementTimeoutException", $fault: "client" })],
  ["Data API communications link failure", () => Object.assign(new Error("Communications link failure"), { name: "BadRequestException", $fault: "client" })],
  ["an AWS SDK timeout", () => Object.assign(new Error("Connection timed out after 5000 ms"), { name: "TimeoutError" })],
];

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const expectUnavailable = (res: { status: number; json: { error?: { code?: string }; requestId?: string } }) => {
  expect(res.status).toBe(503);
  expect(res.json.error?.code).toBe("SERVICE_UNAVAILABLE");
  expect(res.json.requestId).toEqual(expect.any(String));
};

describe.each(backends)("dependency faults on $name", (backend) => {
  const db = faultySql(backend.open);
  let faulty: TestService;
  beforeAll(async () => {
    faulty = await startTestService({ driver: "node", sql: db.open });
  });
  afterAll(() => faulty?.close());

  it("a dependency fault of every backend's client answers 503 SERVICE_UNAVAILABLE, never 500", async () => {
    const svc = faulty;
    for (const [name, make] of faults) {
      db.fail(make);
      const write = await svc.post("/api/v1/posts", { actor: "f-1", json: { text: name } });
      expect(write.status, name).toBe(503);
      expectUnavailable(write);
      expectUnavailable(await svc.get("/api/v1/posts", { actor: "f-1" }));
      db.heal();
    }
    expect((await svc.post("/api/v1/posts", { actor: "f-1", json: { text: "healed" } })).status).toBe(201);
  });

  it("a database that refuses connections answers 503 SERVICE_UNAVAILABLE, and serves again once it accepts them", async () => {
    let db: TestDatabase | undefined;
    svc = await startTestService({ driver: "node", sql: async () => (db = await backend.open()) });
    expect((await svc.post("/api/v1/posts", { actor: "f-2", json: { text: "before" } })).status).toBe(201);
    if (backend.name === "postgres") {
      const name = new URL(db!.url!).pathname.slice(1);
      await admin(async (client) => {
        await client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
      });
      for (let i = 0; i < 5; i++) expectUnavailable(await svc.post("/api/v1/posts", { actor: "f-2", json: { text: "during" } }));
      await admin((client) => client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`));
      expect((await svc.post("/api/v1/posts", { actor: "f-2", json: { text: "after" } })).status).toBe(201);
    } else {
      // The embedded database has no connections to refuse; once closed, every statement is refused.
      await db!.close();
      for (let i = 0; i < 5; i++) expectUnavailable(await svc.post("/api/v1/posts", { actor: "f-2", json: { text: "during" } }));
    }
  });
});

const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};
