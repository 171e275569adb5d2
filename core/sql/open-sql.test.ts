import { readFile } from "node:fs/promises";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openSql } from "./open-sql";

describe("openSql", () => {
  it("opens the backend the configuration names", async () => {
    const embedded = await openSql({ kind: "pglite", dir: "memory" });
    expect(embedded.kind).toBe("pglite");
    expect(await embedded.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await embedded.close();

    const dataApi = await openSql({
      kind: "rds-data",
      database: "svc",
      resourceArn: "arn:aws:rds:us-east-1:123456789012:cluster:svc",
      secretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:svc",
      region: "us-east-1",
    });
    expect(dataApi.kind).toBe("rds-data");
    await dataApi.close();
  });

  it.runIf(process.env.TEST_DATABASE_URL)("opens Postgres from a URL", async () => {
    const db = await openSql({ kind: "postgres", url: process.env.TEST_DATABASE_URL! });
    expect(db.kind).toBe("postgres");
    expect(await db.query("SELECT 2::int8 AS two")).toEqual([{ two: 2 }]);
    await db.close();
  });

  it("imports each adapter lazily, so a bundle using one never loads the others", async () => {
    const source = await readFile(new URL("./open-sql.ts", import.meta.url), "utf8");
    expect(source).not.toMatch(/^import .*\.\/(pglite|postgres|rds-data)"/m);
    expect(source).toMatch(/await import\("\.\/pglite"\)/);
  });

  it("the Postgres adapter leaves pg's global type parsers alone", async () => {
    const before = pg.types.getTypeParser(20, "text");
    const { openPostgres } = await import("./postgres");
    const db = await openPostgres("postgres://nobody@127.0.0.1:1/none");
    expect(pg.types.getTypeParser(20, "text")).toBe(before);
    expect(before("9007199254740993")).toBe("9007199254740993");
    await db.close();
  });
});
