import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { backends, dataApiBackends, freshDatabase, migrationsDir, type TestDatabase } from "../../test/support/databases";
import { migrate, splitStatements } from "./migrate";
import { openPostgres } from "./postgres";

const tableExists = async (db: TestDatabase, name: string) =>
  (await db.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [name]))[0]!.present;

const recorded = async (db: TestDatabase) =>
  (await db.query<{ name: string }>(`SELECT name FROM schema_migrations ORDER BY name`)).map((r) => r.name);

const migrationsIn = async (files: Record<string, string>) => {
  const dir = await mkdtemp(path.join(tmpdir(), "svc-migrations-"));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
};

describe.each([...backends, ...dataApiBackends])("migrations on $name", ({ name, open }) => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  const fresh = async () => {
    const db = await open();
    cleanup.push(() => db.close());
    return db;
  };
  const tempDir = async (files: Record<string, string>) => {
    const dir = await migrationsIn(files);
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  };

  it("applies the project's migrations in name order and records each", async () => {
    const db = await fresh();
    const files = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
    const { applied } = await migrate(db, migrationsDir);
    expect(applied).toEqual(files);
    expect(await recorded(db)).toEqual(files);
    const [row] = await db.query<{ applied_at: Date }>(`SELECT applied_at FROM schema_migrations LIMIT 1`);
    expect(row!.applied_at).toBeInstanceOf(Date);
  });

  it("applies migrations in name order, so a later file may build on an earlier one", async () => {
    const db = await fresh();
    const dir = await tempDir({
      "0002_child.sql": "CREATE TABLE child (id int PRIMARY KEY REFERENCES parent (id));",
      "0001_parent.sql": "CREATE TABLE parent (id int PRIMARY KEY);",
      "README.md": "not a migration",
    });
    expect(await migrate(db, dir)).toEqual({ applied: ["0001_parent.sql", "0002_child.sql"] });
    expect(await tableExists(db, "child")).toBe(true);
  });

  it("a re-run is a no-op", async () => {
    const db = await fresh();
    await migrate(db, migrationsDir);
    const before = await db.query(`SELECT name, applied_at FROM schema_migrations ORDER BY name`);
    expect(await migrate(db, migrationsDir)).toEqual({ applied: [] });
    expect(await db.query(`SELECT name, applied_at FROM schema_migrations ORDER BY name`)).toEqual(before);
  });

  it("a failed migration rolls back whole and is not recorded", async () => {
    const db = await fresh();
    const good = "CREATE TABLE good_one (id int);";
    const dir = await tempDir({
      "0001_good.sql": good,
      "0002_bad.sql": "CREATE TABLE half_done (id int);\nINSERT INTO no_such_table VALUES (1);\n",
    });
    await expect(migrate(db, dir)).rejects.toThrow(/0002_bad\.sql/);
    expect(await tableExists(db, "half_done")).toBe(false);
    expect(await tableExists(db, "good_one")).toBe(true);
    expect(await recorded(db)).toEqual(["0001_good.sql"]);

    // A later run retries it once fixed.
    await writeFile(path.join(dir, "0002_bad.sql"), "CREATE TABLE half_done (id int);\nCREATE TABLE no_such_table (id int);\n");
    expect(await migrate(db, dir)).toEqual({ applied: ["0002_bad.sql"] });
    expect(await tableExists(db, "half_done")).toBe(true);
  });

  it("two concurrent migrate calls apply each migration once", async () => {
    const db = await fresh();
    // Another process: its own connections to the same database where the backend allows it.
    let other: TestDatabase = db;
    if (name === "postgres" && db.url) {
      const second = await openPostgres(db.url);
      cleanup.push(() => second.close());
      other = second;
    }
    // CREATE TABLE without IF NOT EXISTS: a second application would fail.
    const dir = await tempDir({
      "0001_a.sql": "CREATE TABLE once_a (id int);",
      "0002_b.sql": "CREATE TABLE once_b (id int); SELECT 1 AS slept FROM pg_sleep(0.05);",
      "0003_c.sql": "CREATE TABLE once_c (id int);",
    });
    const [first, second] = await Promise.all([migrate(db, dir), migrate(other, dir)]);
    expect([...first.applied, ...second.applied].sort()).toEqual(["0001_a.sql", "0002_b.sql", "0003_c.sql"]);
    expect(await recorded(db)).toEqual(["0001_a.sql", "0002_b.sql", "0003_c.sql"]);
  });

  it("plpgsql bodies with semicolons survive the split", async () => {
    const db = await fresh();
    const dir = await tempDir({
      "0001_fn.sql": `
        -- a function; its body has semicolons
        CREATE FUNCTION add_one(n int) RETURNS int LANGUAGE plpgsql AS $body$
        DECLARE r int;
        BEGIN
          r := n + 1; -- still inside
          RETURN r;
        END;
        $body$;
        /* a block comment; with a semicolon */
        CREATE TABLE notes (t text DEFAULT 'a;b');
        INSERT INTO notes DEFAULT VALUES;
      `,
    });
    await migrate(db, dir);
    expect(await db.query(`SELECT add_one(41) AS v`)).toEqual([{ v: 42 }]);
    expect(await db.query(`SELECT t FROM notes`)).toEqual([{ t: "a;b" }]);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)("migrations on postgres under the pool's statement timeout (docs/operations.md#migrations)", () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });
  /** A fresh database, and a pool on it whose statements time out after 300 ms (SVC_DB_STATEMENT_TIMEOUT_MS). */
  const setUp = async (files: Record<string, string>) => {
    const db = await freshDatabase("postgres");
    cleanup.push(() => db.close());
    const short = await openPostgres(db.url!, { statementMs: 300 });
    cleanup.push(() => short.close());
    const dir = await migrationsIn(files);
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    return { db, short, dir };
  };

  it("a migrator waiting on the lock longer than the statement timeout (another host's migration runs) still applies its migrations, once", async () => {
    const { db, short, dir } = await setUp({ "0001_a.sql": "CREATE TABLE waited_a (id int);" });
    await migrate(db, []);
    // Another host's migration holds the lock for 2 s: past the server's 300 ms and the pg client's 1.3 s.
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const other = db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(7302116853)");
      locked();
      await tx.query("SELECT 1 AS slept FROM pg_sleep(2)");
    });
    await lockTaken;
    const started = Date.now();
    expect(await migrate(short, dir)).toEqual({ applied: ["0001_a.sql"] });
    expect(Date.now() - started).toBeGreaterThan(1500);
    await other;
    expect(await recorded(db)).toEqual(["0001_a.sql"]);
  });

  it("a migration with a statement longer than the statement timeout applies", async () => {
    const { db, short, dir } = await setUp({ "0001_slow.sql": "CREATE TABLE slow_one (id int); SELECT 1 AS slept FROM pg_sleep(0.8);" });
    expect(await migrate(short, dir)).toEqual({ applied: ["0001_slow.sql"] });
    expect(await tableExists(db, "slow_one")).toBe(true);
    // The timeout was the migration's only: the pool's next statement has it again.
    await expect(short.query("SELECT pg_sleep(0.8)")).rejects.toThrow(/statement timeout/);
  });
});

describe("migration files", () => {
  it("a misnamed .sql file is refused before anything runs", async () => {
    const dir = await migrationsIn({ "1_oops.sql": "SELECT 1;" });
    try {
      const sql = { query: async () => [], transaction: async () => undefined } as never;
      await expect(migrate(sql, dir)).rejects.toThrow(/NNNN_name\.sql/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("splitStatements", () => {
  it("splits on semicolons between statements and drops empty and comment-only pieces", () => {
    expect(splitStatements("SELECT 1; SELECT 2;;\n -- trailing comment\n")).toEqual(["SELECT 1", "SELECT 2"]);
  });

  it("keeps semicolons inside dollar-quoted bodies, tagged or not", () => {
    const fn = "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM 1; RETURN 2; END $$";
    const tagged = "CREATE FUNCTION g() RETURNS text LANGUAGE sql AS $fn$ SELECT 'x;y' || $$;$$ $fn$";
    expect(splitStatements(`${fn};\n${tagged};`)).toEqual([fn, tagged]);
  });

  it("keeps semicolons inside single-quoted literals, with doubled and backslash-escaped quotes", () => {
    const a = "INSERT INTO t VALUES ('a;b', 'it''s; fine')";
    const b = "SELECT E'\\'; still a literal'";
    expect(splitStatements(`${a}; ${b}; SELECT 3`)).toEqual([a, b, "SELECT 3"]);
  });

  it("keeps semicolons inside double-quoted identifiers", () => {
    expect(splitStatements('CREATE TABLE "we;ird" ("a;b" int); SELECT 1')).toEqual([
      'CREATE TABLE "we;ird" ("a;b" int)',
      "SELECT 1",
    ]);
  });

  it("ignores semicolons in line comments and nested block comments", () => {
    expect(splitStatements("SELECT 1 -- not; a split\n; /* outer; /* inner; */ still; */ SELECT 2")).toEqual([
      "SELECT 1 -- not; a split",
      "/* outer; /* inner; */ still; */ SELECT 2",
    ]);
  });

  it("does not take a positional parameter or an identifier's dollar for a dollar quote", () => {
    expect(splitStatements("SELECT $1::int; SELECT a$b$ FROM t; SELECT 2")).toEqual([
      "SELECT $1::int",
      "SELECT a$b$ FROM t",
      "SELECT 2",
    ]);
  });
});
