import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPglite, type PgliteBackend } from "./pglite";

describe("PGlite backend", () => {
  let db: PgliteBackend;
  beforeAll(async () => {
    db = await openPglite("memory");
    await db.query("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)");
    await db.query("INSERT INTO counter VALUES (1, 0)");
  });
  afterAll(async () => {
    await db?.close();
  });

  it("concurrent transactions do not interleave: each read-modify-write sees the previous one's commit", async () => {
    const bump = () =>
      db.transaction(async (tx) => {
        const [row] = await tx.query<{ n: number }>("SELECT n FROM counter WHERE id = 1");
        await new Promise(setImmediate); // the others' statements get their turn
        await tx.query("UPDATE counter SET n = $1 WHERE id = 1", [row!.n + 1]);
      });
    await Promise.all(Array.from({ length: 10 }, bump));
    expect(await db.query("SELECT n FROM counter WHERE id = 1")).toEqual([{ n: 10 }]);
  });

  it("PGlite runs with 16 MB of shared buffers, which fit in its initial wasm heap", async () => {
    expect(await db.query("SHOW shared_buffers")).toEqual([{ shared_buffers: "16MB" }]);
  });

  it("a statement on the outer handle from inside a transaction fails instead of hanging", async () => {
    await expect(db.transaction(() => db.query("SELECT 1"))).rejects.toThrow(/transaction's `tx`/);
    // Once the transaction has ended, the outer handle works again, even from the same async context.
    let later: Promise<unknown> | undefined;
    let ended!: () => void;
    const transactionEnded = new Promise<void>((resolve) => (ended = resolve));
    await db.transaction(async () => {
      later = transactionEnded.then(() => db.query("SELECT 1 AS one"));
    });
    ended();
    expect(await later).toEqual([{ one: 1 }]);
  });
});

describe("PGlite data directory", () => {
  it("is created if absent and keeps its data across reopenings", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "svc-pglite-"));
    const dir = path.join(root, "nested", "data");
    try {
      const first = await openPglite(dir);
      await first.query("CREATE TABLE kept (v text)");
      await first.query("INSERT INTO kept VALUES ($1)", ["still here"]);
      await first.close();
      const second = await openPglite(dir);
      expect(await second.query("SELECT v FROM kept")).toEqual([{ v: "still here" }]);
      await second.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("PGlite runs statements with parameters as named prepared statements", () => {
  it("prepares a text once and reuses it; statements without parameters are not prepared", async () => {
    const db = await openPglite("memory");
    try {
      const prepared = () => db.query<{ name: string }>("SELECT name FROM pg_prepared_statements ORDER BY name");
      expect(await db.query("SELECT $1::int + 1 AS n", [1])).toEqual([{ n: 2 }]);
      expect(await db.query("SELECT $1::int + 1 AS n", [41])).toEqual([{ n: 42 }]);
      expect(await db.query("SELECT $1::text AS t, $2::json AS j", ["x", '{"a":1}'])).toEqual([{ t: "x", j: { a: 1 } }]);
      expect((await prepared()).map((p) => p.name)).toEqual(["svc_pglite_0", "svc_pglite_1"]);
      await expect(db.query("SELECT $1::int / 0 AS n", [1])).rejects.toMatchObject({ code: "22012" });
      expect(await db.query("SELECT $1::int + 1 AS n", [1])).toEqual([{ n: 2 }]);
    } finally {
      await db.close();
    }
  });
});
