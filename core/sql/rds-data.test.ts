import {
  BeginTransactionCommand,
  CommitTransactionCommand,
  DatabaseResumingException,
  ExecuteStatementCommand,
  RollbackTransactionCommand,
  type RDSDataClient,
} from "@aws-sdk/client-rds-data";
import { describe, expect, it } from "vitest";
import { isDependencyUnavailable } from "../invocation/dependency-unavailable";
import { invocationDeadlineMs, withinDeadline } from "../deadline/deadline";
import { openRdsData, toDataApiTimestamp, toNamedPlaceholders } from "./rds-data";

type Sent = { name: string; input: Record<string, unknown> };

/** A stand-in RDSDataClient: records every command and answers from `reply`. */
const stubClient = (reply: (command: Sent, n: number) => unknown) => {
  const sent: Sent[] = [];
  const client = {
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      const entry = { name: command.constructor.name, input: command.input };
      sent.push(entry);
      const answer = reply(entry, sent.length);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { client: client as unknown as RDSDataClient, sent };
};

const target = {
  database: "svc",
  resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:svc",
  secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:svc",
};
const resuming = () => new DatabaseResumingException({ message: "Aurora is resuming", $metadata: {} });
const empty = { records: [], columnMetadata: [] };

describe("the Data API adapter", () => {
  it("retries DatabaseResumingException with exponential backoff, then succeeds", async () => {
    const delays: number[] = [];
    const { client, sent } = stubClient((_, n) =>
      n <= 4 ? resuming() : { records: [[{ longValue: 1 }]], columnMetadata: [{ name: "one", typeName: "int4" }] },
    );
    const sql = openRdsData({ ...target, client, retry: { sleep: async (ms) => void delays.push(ms) } });
    expect(await sql.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect(sent).toHaveLength(5);
    expect(delays).toEqual([250, 500, 1000, 2000]);
  });

  it("stops retrying a resuming database after a bounded number of tries, capping each wait", async () => {
    const delays: number[] = [];
    const { client, sent } = stubClient(() => resuming());
    const sql = openRdsData({ ...target, client, retry: { tries: 6, maxMs: 1500, sleep: async (ms) => void delays.push(ms) } });
    await expect(sql.query("SELECT 1")).rejects.toMatchObject({ name: "DatabaseResumingException" });
    expect(sent).toHaveLength(6);
    expect(delays).toEqual([250, 500, 1000, 1500, 1500]);
  });

  it("the default backoff is bounded", async () => {
    const delays: number[] = [];
    const { client } = stubClient(() => resuming());
    const sql = openRdsData({ ...target, client, retry: { sleep: async (ms) => void delays.push(ms) } });
    await expect(sql.query("SELECT 1")).rejects.toThrow();
    expect(delays.length).toBeLessThanOrEqual(10);
    expect(delays.reduce((a, b) => a + b, 0)).toBeLessThan(25_000);
  });

  it("other errors are not retried", async () => {
    const delays: number[] = [];
    const failure = Object.assign(new Error("ERROR: relation \"nope\" does not exist"), { name: "BadRequestException" });
    const { client, sent } = stubClient(() => failure);
    const sql = openRdsData({ ...target, client, retry: { sleep: async (ms) => void delays.push(ms) } });
    await expect(sql.query("SELECT * FROM nope")).rejects.toBe(failure);
    expect(sent).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("a response over the Data API size limit is a clear error, never a truncated result", async () => {
    const { client } = stubClient(() =>
      Object.assign(new Error("Database returned more than the allowed response size limit"), { name: "BadRequestException" }),
    );
    const sql = openRdsData({ ...target, client });
    await expect(sql.query("SELECT * FROM big")).rejects.toThrow(/1 MiB/);
  });

  it("a SQLSTATE in the error text is kept as the error's code", async () => {
    const { client } = stubClient(() =>
      Object.assign(new Error('ERROR: duplicate key value violates unique constraint "t_pkey"; SQLState: 23505'), {
        name: "DatabaseErrorException",
      }),
    );
    await expect(openRdsData({ ...target, client }).query("INSERT INTO t VALUES (1)")).rejects.toMatchObject({ code: "23505" });
  });

  it("each call carries exactly one statement, and a multi-statement text is refused before sending", async () => {
    const { client, sent } = stubClient(() => empty);
    const sql = openRdsData({ ...target, client });
    await sql.query("SELECT 1;");
    await sql.query("SELECT ';' AS semi -- trailing; comment");
    await expect(sql.query("SELECT 1; DROP TABLE posts")).rejects.toThrow(/one SQL statement/);
    expect(sent.map((c) => c.input.sql)).toEqual(["SELECT 1;", "SELECT ';' AS semi -- trailing; comment"]);
    expect(sent.every((c) => c.name === "ExecuteStatementCommand" && c.input.includeResultMetadata === true)).toBe(true);
  });

  it("placeholders become named parameters, keeping ::casts, literals, identifiers and comments intact", () => {
    expect(toNamedPlaceholders("SELECT $1::jsonb, $2::int, '$1 and $2', \"col$1\", x$1 -- $3\nFROM t WHERE id = $10")).toBe(
      "SELECT :p1::jsonb, :p2::int, '$1 and $2', \"col$1\", x$1 -- $3\nFROM t WHERE id = :p10",
    );
    expect(toNamedPlaceholders("SELECT $tag$ $1 $tag$, E'\\'$1', $1")).toBe("SELECT $tag$ $1 $tag$, E'\\'$1', :p1");
  });

  it("parameters map to Data API fields by type", async () => {
    const { client, sent } = stubClient(() => empty);
    const sql = openRdsData({ ...target, client });
    const at = new Date("2024-03-04T05:06:07.089Z");
    const bytes = new Uint8Array([1, 2, 3]);
    await sql.query("SELECT $1, $2, $3, $4, $5, $6, $7", ["s", 42, 1.5, true, null, at, bytes]);
    const [call] = sent;
    expect(call!.input).toMatchObject({ ...target, sql: "SELECT :p1, :p2, :p3, :p4, :p5, :p6, :p7" });
    expect(call!.input.parameters).toEqual([
      { name: "p1", value: { stringValue: "s" } },
      { name: "p2", value: { longValue: 42 } },
      { name: "p3", value: { doubleValue: 1.5 } },
      { name: "p4", value: { booleanValue: true } },
      { name: "p5", value: { isNull: true } },
      { name: "p6", value: { stringValue: "2024-03-04 05:06:07.089" }, typeHint: "TIMESTAMP" },
      { name: "p7", value: { blobValue: bytes } },
    ]);
    expect(toDataApiTimestamp(new Date("2024-12-31T23:59:59.999Z"))).toBe("2024-12-31 23:59:59.999");
  });

  it("results are normalised by column type name", async () => {
    const { client } = stubClient(() => ({
      columnMetadata: [
        { name: "doc", typeName: "jsonb" },
        { name: "at", typeName: "timestamptz" },
        { name: "big", typeName: "int8" },
        { name: "total", typeName: "numeric" },
        { name: "ok", typeName: "bool" },
        { name: "bytes", typeName: "bytea" },
        { name: "gone", typeName: "text" },
        { name: "hits", typeName: "_timestamptz" },
      ],
      records: [
        [
          { stringValue: '{"a":[1]}' },
          { stringValue: "2024-01-02 03:04:05.678901" },
          { longValue: 2 ** 40 },
          { stringValue: "12" },
          { booleanValue: true },
          { blobValue: new Uint8Array([9]) },
          { isNull: true },
          { arrayValue: { stringValues: ["2024-01-02 03:04:05", "2024-01-02 03:04:06.5"] } },
        ],
      ],
    }));
    const [row] = await openRdsData({ ...target, client }).query("SELECT ...");
    expect(row).toEqual({
      doc: { a: [1] },
      at: new Date("2024-01-02T03:04:05.678Z"),
      big: 2 ** 40,
      total: 12,
      ok: true,
      bytes: new Uint8Array([9]),
      gone: null,
      hits: [new Date("2024-01-02T03:04:05Z"), new Date("2024-01-02T03:04:06.500Z")],
    });
  });

  it("a transaction runs its statements under one transactionId and commits when it resolves", async () => {
    const { client, sent } = stubClient((c) => (c.name === "BeginTransactionCommand" ? { transactionId: "tx-1" } : empty));
    const sql = openRdsData({ ...target, client });
    await sql.transaction(async (tx) => {
      await Promise.all([tx.query("INSERT INTO t VALUES ($1)", [1]), tx.query("INSERT INTO t VALUES ($1)", [2])]);
    });
    expect(sent.map((c) => c.name)).toEqual([
      BeginTransactionCommand.name,
      ExecuteStatementCommand.name,
      ExecuteStatementCommand.name,
      CommitTransactionCommand.name,
    ]);
    expect(sent.slice(1).every((c) => c.input.transactionId === "tx-1")).toBe(true);
  });

  it("a transaction that throws is rolled back, and the caller sees its error", async () => {
    const { client, sent } = stubClient((c) => (c.name === "BeginTransactionCommand" ? { transactionId: "tx-2" } : empty));
    const failure = new Error("nope");
    await expect(
      openRdsData({ ...target, client }).transaction(async (tx) => {
        await tx.query("SELECT 1");
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(sent.map((c) => c.name)).toEqual([
      BeginTransactionCommand.name,
      ExecuteStatementCommand.name,
      RollbackTransactionCommand.name,
    ]);
    expect(sent[2]!.input.transactionId).toBe("tx-2");
  });

  it("a rollback refused while the transaction's abandoned statement still runs is sent again until AWS takes it", async () => {
    let rollbacks = 0;
    const busy = () => Object.assign(new Error("Transaction is still running a query"), { name: "DatabaseErrorException" });
    const { client, sent } = stubClient((c) => {
      if (c.name === "BeginTransactionCommand") return { transactionId: "tx-busy" };
      if (c.name === "ExecuteStatementCommand") return Object.assign(new Error("Request timed out"), { name: "TimeoutError" });
      if (c.name === "RollbackTransactionCommand" && ++rollbacks < 3) return busy();
      return { transactionStatus: "Rollback Complete" };
    });
    const waits: number[] = [];
    const sql = openRdsData({ ...target, client, retry: { sleep: async (ms) => void waits.push(ms) } });
    await expect(sql.transaction((tx) => tx.query("SELECT 1"))).rejects.toThrow("Request timed out");
    expect(sent.map((c) => c.name)).toEqual([
      BeginTransactionCommand.name,
      ExecuteStatementCommand.name,
      RollbackTransactionCommand.name,
      RollbackTransactionCommand.name,
      RollbackTransactionCommand.name,
    ]);
    expect(waits).toEqual([250, 500]);
  });

  describe("wake-up retries are bounded by the invocation's remaining time", () => {
    /** A clock that only moves when the adapter sleeps or a call takes time: seconds of retries run in microseconds. */
    const fakeTime = (remainingAtStart: number, callMs = 200) => {
      let now = 0;
      return {
        elapsed: () => now,
        call: () => void (now += callMs),
        retry: { sleep: async (ms: number) => void (now += ms), remainingMs: () => remainingAtStart - now },
      };
    };

    it("a Lambda with 10 s left (the function timeout) stops retrying a resuming Aurora in time to answer 503 before it is cut off", async () => {
      const time = fakeTime(invocationDeadlineMs(20_000, 10_000)!);
      const { client, sent } = stubClient(() => (time.call(), resuming()));
      const error = await openRdsData({ ...target, client, retry: time.retry }).query("SELECT 1").catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "DatabaseResumingException" });
      expect(isDependencyUnavailable(error)).toBe(true);
      // The unbounded backoff would have slept about 18 s over 8 tries.
      expect(time.elapsed()).toBeLessThan(9_000);
      expect(sent.length).toBeGreaterThan(1);
    });

    it("no retry is started that could not finish before the deadline", async () => {
      const time = fakeTime(1_600);
      const { client, sent } = stubClient(() => (time.call(), resuming()));
      await expect(openRdsData({ ...target, client, retry: time.retry }).query("SELECT 1")).rejects.toMatchObject({
        name: "DatabaseResumingException",
      });
      // 200 ms call, 250 ms wait, 200 ms call; then 500 ms more waiting and a call would not leave a second to answer.
      expect(sent).toHaveLength(2);
      expect(time.elapsed()).toBe(650);
    });

    it("inside a request deadline the adapter gives up on its own, before the deadline answers for it", async () => {
      const { client } = stubClient(() => resuming());
      const started = Date.now();
      const error = await withinDeadline(1_500, () => openRdsData({ ...target, client }).query("SELECT 1")).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "DatabaseResumingException" });
      expect(Date.now() - started).toBeLessThan(1_500);
    });

    it("outside any deadline the bounded backoff still applies", async () => {
      const delays: number[] = [];
      const { client } = stubClient(() => resuming());
      await expect(openRdsData({ ...target, client, retry: { sleep: async (ms) => void delays.push(ms) } }).query("SELECT 1")).rejects.toThrow();
      expect(delays.reduce((a, b) => a + b, 0)).toBeLessThan(25_000);
    });
  });
});
