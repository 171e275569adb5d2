import type { RDSDataClient } from "@aws-sdk/client-rds-data";
import { EventEmitter } from "node:events";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { freshDatabase } from "../../test/support/databases";
import { openRdsData } from "./rds-data";
import { rollbackFailureOf } from "./rollback-failure";

/** A failed ROLLBACK never replaces the transaction's own error: it rides along on it, for the invocation to log. */
describe("a ROLLBACK that fails after a failed transaction", () => {
  it.runIf(process.env.TEST_DATABASE_URL)("on Postgres: the statement's error is thrown, carrying the rollback's; the pool serves on", async () => {
    const db = await freshDatabase("postgres");
    try {
      // The transaction's connection is killed by its own statement, so the ROLLBACK that follows cannot be sent.
      const failed = await db.transaction((tx) => tx.query("SELECT pg_terminate_backend(pg_backend_pid())")).catch((error: unknown) => error);
      expect(failed).toMatchObject({ code: "57P01" }); // admin_shutdown: the statement's own error
      expect(rollbackFailureOf(failed)).toBeInstanceOf(Error);
      expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)("on Postgres: a connection lost inside a transaction is the statement's error, never an uncaught exception", async () => {
    const db = await freshDatabase("postgres");
    // Resolves when a connection emits its own 'error' (Connection terminated unexpectedly).
    let connectionLost!: () => void;
    const lost = new Promise<void>((resolve) => (connectionLost = resolve));
    const emit = vi.spyOn(pg.Client.prototype, "emit").mockImplementation(function (this: pg.Client, event, ...args) {
      if (event === "error") connectionLost();
      return EventEmitter.prototype.emit.call(this, event, ...args);
    });
    try {
      const failed = await db
        .transaction((tx) =>
          // The transaction still holds the connection when its 'error' lands: it waits for that event before failing.
          tx.query("SELECT pg_terminate_backend(pg_backend_pid())").catch(async (error: unknown) => {
            await lost;
            throw error;
          }),
        )
        .catch((error: unknown) => error);
      expect(failed).toMatchObject({ code: "57P01" });
      expect(emit.mock.calls.some(([event]) => event === "error")).toBe(true);
      expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    } finally {
      emit.mockRestore();
      await db.close();
    }
  });

  it("on the Data API: the statement's error is thrown, carrying the RollbackTransaction's", async () => {
    const statementError = new Error("statement failed");
    const rollbackError = new Error("rollback failed");
    const client = {
      async send(command: { constructor: { name: string } }) {
        const name = command.constructor.name;
        if (name === "BeginTransactionCommand") return { transactionId: "tx-1" };
        throw name === "RollbackTransactionCommand" ? rollbackError : statementError;
      },
    } as unknown as RDSDataClient;
    const sql = openRdsData({ database: "svc", resourceArn: "arn:cluster", secretArn: "arn:secret", client });
    const failed = await sql.transaction((tx) => tx.query("SELECT 1")).catch((error: unknown) => error);
    expect(failed).toBe(statementError);
    expect(rollbackFailureOf(failed)).toBe(rollbackError);
  });

  it("a rollback that succeeds leaves nothing on the error", async () => {
    const client = {
      async send(command: { constructor: { name: string } }) {
        const name = command.constructor.name;
        if (name === "BeginTransactionCommand") return { transactionId: "tx-1" };
        if (name === "RollbackTransactionCommand") return {};
        throw new Error("statement failed");
      },
    } as unknown as RDSDataClient;
    const failed = await openRdsData({ database: "svc", resourceArn: "a", secretArn: "s", client }).transaction((tx) => tx.query("SELECT 1")).catch((e: unknown) => e);
    expect(rollbackFailureOf(failed)).toBeUndefined();
  });
});
