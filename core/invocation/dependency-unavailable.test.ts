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
  ])("%s is unavailable (503)", (_, error) => {
    expect(isDependencyUnavailable(error)).toBe(true);
  });

  it.each([
    ["a plain bug", new TypeError("x is undefined")],
    ["a constraint violation", Object.assign(new Error("violates check constraint"), { code: "23514" })],
    ["an AWS client fault", Object.assign(new Error("bad request"), { name: "BadRequestException", $fault: "client" })],
  ])("%s is not (500)", (_, error) => {
    expect(isDependencyUnavailable(error)).toBe(false);
  });
});
