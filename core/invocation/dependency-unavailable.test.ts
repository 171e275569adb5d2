import { describe, expect, it } from "vitest";
import { isDependencyUnavailable } from "./dependency-unavailable";

describe("a dependency that is down is told apart from a fault", () => {
  it.each([
    ["a refused socket", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })],
    ["a Postgres connection failure (SQLSTATE class 08)", Object.assign(new Error("connection failure"), { code: "08006" })],
    ["Postgres shutting down", Object.assign(new Error("terminating connection"), { code: "57P01" })],
    ["pg losing its connection", new Error("Connection terminated unexpectedly")],
    ["Aurora still resuming after the retries", Object.assign(new Error("resuming"), { name: "DatabaseResumingException" })],
    ["an AWS server fault", Object.assign(new Error("oops"), { name: "InternalError", $fault: "server" })],
    ["a wrapped cause", new Error("outer", { cause: Object.assign(new Error("inner"), { code: "ETIMEDOUT" }) })],
    ["a database refusing connections (SQLSTATE 55000)", Object.assign(new Error("database is not accepting connections"), { code: "55000" })],
    ["too many connections (53300)", Object.assign(new Error("too many clients"), { code: "53300" })],
    ["out of memory (53200)", Object.assign(new Error("out of memory"), { code: "53200" })],
    ["cannot connect now (57P03)", Object.assign(new Error("the database system is starting up"), { code: "57P03" })],
    ["a statement timeout (57014)", Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" })],
    ["a read-only transaction during failover (25006)", Object.assign(new Error("read-only"), { code: "25006" })],
    ["pg's read timeout", new Error("Query read timeout")],
    ["pg's pool checkout timeout", new Error("timeout exceeded when trying to connect")],
    ["PGlite closed", new Error("PGlite is closed")],
    ["Data API throttling", Object.assign(new Error("slow down"), { name: "ThrottlingException", $fault: "client" })],
    ["Data API statement timeout", Object.assign(new Error("timeout"), { name: "StatementTimeoutException", $fault: "client" })],
    ["Data API link failure", Object.assign(new Error("Communications link failure"), { name: "BadRequestException", $fault: "client" })],
  ])("%s is unavailable (503)", (_, error) => {
    expect(isDependencyUnavailable(error)).toBe(true);
  });

  it.each([
    ["a plain bug", new TypeError("x is undefined")],
    ["a constraint violation", Object.assign(new Error("violates check constraint"), { code: "23514" })],
    ["a syntax error", Object.assign(new Error("syntax error"), { code: "42601" })],
    ["a deadlock (the caller retries)", Object.assign(new Error("deadlock detected"), { code: "40P01" })],
    ["an AWS client fault", Object.assign(new Error("bad request"), { name: "BadRequestException", $fault: "client" })],
  ])("%s is not (500)", (_, error) => {
    expect(isDependencyUnavailable(error)).toBe(false);
  });
});
