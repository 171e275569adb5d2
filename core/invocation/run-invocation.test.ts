import { describe, expect, it } from "vitest";
import { DomainError } from "../domain-error";
import type { Logger, LogExtra } from "../observability/logger";
import type { Sql } from "../sql/port";
import { withRollbackFailure } from "../sql/rollback-failure";
import { runInvocation } from "./run-invocation";

const recorder = () => {
  const lines: { level: string; message: string; fields: Record<string, unknown>; error?: Error }[] = [];
  const at =
    (level: string) =>
    (message: string, ...extra: LogExtra[]) => {
      const fields = Object.assign({}, ...extra.filter((e) => !(e instanceof Error)));
      lines.push({ level, message, fields, error: extra.find((e): e is Error => e instanceof Error) });
    };
  const logger: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { logger, lines };
};

const sql: Sql = { query: async () => [], transaction: (fn) => fn(sql) };

describe("runInvocation: what every route, job and system call shares", () => {
  it("writes one summary line carrying the correlation id, the statement count and annotations", async () => {
    const { logger, lines } = recorder();
    const result = await runInvocation({ name: "process-audio", deps: { logger, sql }, requestId: "job-1" }, async (inv) => {
      await inv.sql.query("SELECT 1");
      await inv.sql.query("SELECT 2");
      inv.annotate({ postId: "p1" });
      inv.log.debug("working");
      return 42;
    });
    expect(result).toBe(42);
    expect(lines.map((l) => l.fields.requestId)).toEqual(["job-1", "job-1"]);
    expect(lines[1]).toMatchObject({ level: "info", message: "invocation", fields: { invocation: "process-audio", sqlStatements: 2, postId: "p1" } });
    expect(lines[1]!.fields.durationMs).toEqual(expect.any(Number));
  });

  it("a transaction whose ROLLBACK failed too is logged with the request id, and its own error is the one thrown", async () => {
    const { logger, lines } = recorder();
    const failure = new Error("statement failed");
    const broken: Sql = { query: async () => [], transaction: async () => Promise.reject(withRollbackFailure(failure, new Error("connection lost"))) };
    const thrown = await runInvocation({ name: "x", deps: { logger, sql: broken }, requestId: "req-7" }, async (inv) =>
      inv.sql.transaction(async () => undefined).catch((error: unknown) => error),
    );
    expect(thrown).toBe(failure);
    expect(lines.filter((l) => l.level === "error")).toEqual([
      { level: "error", message: "ROLLBACK failed after a failed transaction", fields: { requestId: "req-7", reason: "connection lost", transactionError: "statement failed" }, error: undefined },
    ]);
  });

  it("a failed transaction whose ROLLBACK went through logs no rollback line", async () => {
    const { logger, lines } = recorder();
    const rolledBack: Sql = { query: async () => [], transaction: async () => Promise.reject(new Error("statement failed")) };
    await runInvocation({ name: "x", deps: { logger, sql: rolledBack } }, async (inv) => inv.sql.transaction(async () => undefined).catch(() => undefined));
    expect(lines.map((l) => l.level)).toEqual(["info"]);
  });

  it("a fresh UUID is the correlation id when none is carried in", async () => {
    const { logger, lines } = recorder();
    await runInvocation({ name: "sweep", deps: { logger } }, async () => undefined);
    expect(lines[0]!.fields.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("a domain error is rethrown as itself, coded on the line, with no stack logged", async () => {
    const { logger, lines } = recorder();
    const error = new DomainError("NOT_FOUND", "post not found");
    await expect(runInvocation({ name: "x", deps: { logger } }, async () => Promise.reject(error))).rejects.toBe(error);
    expect(lines.map((l) => l.level)).toEqual(["info"]);
    expect(lines[0]!.fields.errorCode).toBe("NOT_FOUND");
  });

  it("an unreachable dependency becomes SERVICE_UNAVAILABLE, warned once per outage without a stack; a fault becomes INTERNAL, logged each time with its stack", async () => {
    const { logger, lines } = recorder();
    const refused = () => Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    let up = false;
    const database: Sql = { query: async () => (up ? [] : Promise.reject(refused())), transaction: (fn) => fn(database) };
    const query = () => runInvocation({ name: "x", deps: { logger, sql: database } }, (inv) => inv.sql.query("SELECT 1")).catch((e) => e);
    const down = await query();
    expect(down).toMatchObject({ code: "SERVICE_UNAVAILABLE", cause: { code: "ECONNREFUSED" } });
    await query();
    up = true;
    await query();
    await query();
    const bug = await runInvocation({ name: "x", deps: { logger } }, async () => Promise.reject(new TypeError("x is undefined"))).catch((e) => e);
    expect(bug).toBeInstanceOf(DomainError);
    expect(bug.code).toBe("INTERNAL");
    const notes = lines.filter((l) => l.message !== "invocation");
    expect(notes.map((l) => [l.level, l.message, l.fields.dependency, l.fields.failedRequests, l.error?.message])).toEqual([
      ["warn", "dependency unavailable", "database", undefined, undefined],
      ["warn", "dependency available again", "database", 2, undefined],
      ["error", "unhandled error", undefined, undefined, "x is undefined"],
    ]);
  });

  it("the warning that a dependency went down carries the request id of the request that found it down", async () => {
    const { logger, lines } = recorder();
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const database: Sql = { query: () => Promise.reject(refused), transaction: (fn) => fn(database) };
    const requestId = "11111111-2222-4333-8444-555555555555";
    // A route answers its failure itself, through failed(), rather than throwing it.
    await runInvocation({ name: "get-post", deps: { logger, sql: database }, requestId, message: "request" }, (inv) =>
      inv.sql.query("SELECT 1").catch((error: unknown) => void inv.failed(error)),
    );
    expect(lines.map((l) => [l.level, l.message, l.fields.requestId])).toEqual([
      ["warn", "dependency unavailable", requestId],
      ["info", "request", requestId],
    ]);
  });

  it("an invocation without an SQL port fails clearly if it queries", async () => {
    const { logger } = recorder();
    const error = await runInvocation({ name: "openapi", deps: { logger } }, (inv) => inv.sql.query("SELECT 1")).catch((e) => e);
    expect(error.cause.message).toMatch(/no SQL port/);
  });
});
