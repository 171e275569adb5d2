/**
 * The Data API client the adapter builds for itself (not the emulator's, which the suites pass in), against a
 * loopback server that speaks the Data API's HTTP: a statement is sent once, and its request timeout holds.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { isDependencyUnavailable } from "../invocation/dependency-unavailable";
import { openRdsData } from "./rds-data";

type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let server: http.Server;
let answers: Answer[] = [];
const executed: string[] = [];
const saved = { ...process.env };

const ok: Answer = (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ numberOfRecordsUpdated: 1, records: [[{ longValue: 1 }]], columnMetadata: [{ name: "one", label: "one", typeName: "int4" }] }));
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      executed.push(JSON.parse(body).sql as string);
      (answers.shift() ?? ok)(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.env.AWS_ENDPOINT_URL_RDS_DATA = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ACCESS_KEY_ID = "local";
  process.env.AWS_SECRET_ACCESS_KEY = "local";
});

afterAll(async () => {
  process.env = saved;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterEach(() => {
  answers = [];
  executed.length = 0;
});

const open = (requestMs = 5_000) =>
  openRdsData({
    database: "svc",
    resourceArn: "arn:aws:rds:us-east-1:1:cluster:c",
    secretArn: "arn:aws:secretsmanager:us-east-1:1:secret:s",
    region: "us-east-1",
    connectMs: 1_000,
    requestMs,
  });

describe("the Data API client the adapter builds", () => {
  it.each([
    ["the connection is reset", ((req) => req.socket.destroy()) as Answer],
    ["a 503 answers", ((_req, res) => (res.writeHead(503, { "content-type": "application/json" }), res.end('{"message":"Service Unavailable"}'))) as Answer],
  ])("sends a write once when %s after it reached the database (the SDK's own retries would run it twice)", async (_case, first) => {
    answers = [first];
    const db = open();
    try {
      const error = await db.query("INSERT INTO ledger (amount) VALUES ($1)", [100]).catch((e: unknown) => e);
      expect(isDependencyUnavailable(error)).toBe(true);
      expect(executed).toEqual(["INSERT INTO ledger (amount) VALUES (:p1)"]);
    } finally {
      await db.close();
    }
  });

  it("gives up on a call once SVC_DB_STATEMENT_TIMEOUT_MS (its request timeout) passes without an answer", async () => {
    answers = [(_req, res) => void setTimeout(() => ok(_req, res), 3_000)];
    const db = open(300);
    const started = performance.now();
    try {
      const error = await db.query("SELECT 1 AS one").catch((e: unknown) => e);
      expect(isDependencyUnavailable(error), String(error)).toBe(true);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(executed).toHaveLength(1);
    } finally {
      await db.close();
    }
  });
});
