import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, dataApiBackends, type TestDatabase } from "../../test/support/databases";

const everyBackend = [...backends, ...dataApiBackends];

describe.each(everyBackend)("the SQL port on $name", ({ open }) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await open();
    await db.query(
      `CREATE TABLE port_things (id int8 PRIMARY KEY, doc jsonb, at timestamptz, flag bool, note text, bytes bytea)`,
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  it("jsonb and json come back parsed", async () => {
    const [row] = await db.query(`SELECT $1::jsonb AS doc, '[1,"two",null]'::json AS list, '"str"'::jsonb AS scalar`, [
      JSON.stringify({ a: { b: [1, 2] }, s: "x;y" }),
    ]);
    expect(row).toEqual({ doc: { a: { b: [1, 2] }, s: "x;y" }, list: [1, "two", null], scalar: "str" });
  });

  it("timestamptz and timestamp come back as Dates, to the millisecond", async () => {
    const at = new Date("2024-02-29T23:59:58.123Z");
    const [row] = await db.query<{ at: Date; plain: Date; literal: Date }>(
      `SELECT $1::timestamptz AS at, '2024-01-02 03:04:05.678'::timestamp AS plain,
              '2024-01-02 03:04:05.678+02'::timestamptz AS literal`,
      [at],
    );
    expect(row!.at).toBeInstanceOf(Date);
    expect(row!.at.toISOString()).toBe(at.toISOString());
    expect(row!.plain.toISOString()).toBe("2024-01-02T03:04:05.678Z");
    expect(row!.literal.toISOString()).toBe("2024-01-02T01:04:05.678Z");
  });

  it("int2, int4, int8 and integer numerics come back as numbers", async () => {
    const [row] = await db.query(
      `SELECT 7::int2 AS small, $1::int4 AS mid, $2::int8 AS big, count(*) AS counted, 12::numeric AS whole, 1.5::float8 AS real`,
      [123, 2 ** 40],
    );
    expect(row).toEqual({ small: 7, mid: 123, big: 2 ** 40, counted: 1, whole: 12, real: 1.5 });
  });

  it("bool, text and NULL come back as boolean, string and null", async () => {
    const [row] = await db.query(`SELECT $1::bool AS yes, false AS no, $2::text AS note, $3::text AS nothing, NULL AS bare`, [
      true,
      "it's; fine",
      null,
    ]);
    expect(row).toEqual({ yes: true, no: false, note: "it's; fine", nothing: null, bare: null });
  });

  it("arrays come back with each element normalised", async () => {
    const [row] = await db.query(
      `SELECT ARRAY['2024-01-01 00:00:00.5+00'::timestamptz] AS at, ARRAY[1::int8, 2] AS big, ARRAY['a', 'b;'] AS words,
              ARRAY['{"a":1}'::jsonb] AS docs`,
    );
    expect(row).toEqual({ at: [new Date("2024-01-01T00:00:00.500Z")], big: [1, 2], words: ["a", "b;"], docs: [{ a: 1 }] });
  });

  it("bytea round-trips as a Uint8Array", async () => {
    const bytes = new Uint8Array([0, 1, 2, 253, 254, 255]);
    await db.query(`INSERT INTO port_things (id, bytes) VALUES ($1, $2)`, [1, bytes]);
    const [row] = await db.query<{ bytes: Uint8Array }>(`SELECT bytes FROM port_things WHERE id = $1`, [1]);
    expect(row!.bytes).toBeInstanceOf(Uint8Array);
    expect([...row!.bytes]).toEqual([...bytes]);
  });

  it("a stored row reads back normalised", async () => {
    const at = new Date("2025-06-01T12:00:00.500Z");
    await db.query(`INSERT INTO port_things (id, doc, at, flag, note) VALUES ($1, $2::jsonb, $3, $4, $5)`, [
      2,
      JSON.stringify({ k: "v" }),
      at,
      true,
      "n",
    ]);
    const rows = await db.query(`SELECT id, doc, at, flag, note, bytes FROM port_things WHERE id = $1`, [2]);
    expect(rows).toEqual([{ id: 2, doc: { k: "v" }, at, flag: true, note: "n", bytes: null }]);
  });

  it("a statement with no result rows returns an empty array", async () => {
    expect(await db.query(`UPDATE port_things SET note = 'x' WHERE id = -1`)).toEqual([]);
  });

  it("a transaction that resolves commits", async () => {
    const result = await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO port_things (id, note) VALUES ($1, $2)`, [10, "committed"]);
      return "done";
    });
    expect(result).toBe("done");
    expect(await db.query(`SELECT note FROM port_things WHERE id = 10`)).toEqual([{ note: "committed" }]);
  });

  it("a transaction that throws rolls back", async () => {
    const failure = new Error("boom");
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO port_things (id, note) VALUES ($1, $2)`, [11, "rolled back"]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await db.query(`SELECT note FROM port_things WHERE id = 11`)).toEqual([]);
  });

  it("a transaction whose statement fails rolls back its earlier statements", async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO port_things (id) VALUES (12)`);
        await tx.query(`INSERT INTO port_things (id) VALUES (12)`);
      }),
    ).rejects.toThrow();
    expect(await db.query(`SELECT id FROM port_things WHERE id = 12`)).toEqual([]);
  });

  it("a transaction whose failed statement was caught inside it does not resolve as committed: it rejects, and nothing of it stays", async () => {
    const outcome = db.transaction(async (tx) => {
      await tx.query(`INSERT INTO port_things (id, note) VALUES (13, 'before')`);
      await tx.query(`INSERT INTO port_things (id) VALUES (13)`).catch(() => undefined);
      return "done";
    });
    await expect(outcome).rejects.toThrow(/failed and its error was caught/);
    expect(await db.query(`SELECT id FROM port_things WHERE id = 13`)).toEqual([]);
  });

  it("a failure a nested transaction took back leaves the outer one free to commit", async () => {
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO port_things (id, note) VALUES (14, 'outer')`);
      await tx
        .transaction(async (inner) => {
          await inner.query(`INSERT INTO port_things (id) VALUES (14)`);
        })
        .catch(() => undefined);
      await tx.query(`INSERT INTO port_things (id, note) VALUES (15, 'after')`);
    });
    expect(await db.query(`SELECT id FROM port_things WHERE id IN (14, 15) ORDER BY id`)).toEqual([{ id: 14 }, { id: 15 }]);
  });

  it("a nested transaction that throws rolls back only its own work", async () => {
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO port_things (id, note) VALUES (20, 'outer')`);
      await expect(
        tx.transaction(async (inner) => {
          await inner.query(`INSERT INTO port_things (id, note) VALUES (21, 'inner')`);
          throw new Error("inner fails");
        }),
      ).rejects.toThrow("inner fails");
    });
    expect(await db.query(`SELECT id FROM port_things WHERE id IN (20, 21) ORDER BY id`)).toEqual([{ id: 20 }]);
  });

  it("two concurrent transactions both succeed", async () => {
    const write = (id: number) =>
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO port_things (id, note) VALUES ($1, 'first')`, [id]);
        await new Promise(setImmediate); // the other transaction and the outer statement get their turn
        await tx.query(`UPDATE port_things SET note = 'second' WHERE id = $1`, [id]);
        return id;
      });
    expect(await Promise.all([write(30), write(31), db.query(`SELECT 1 AS one`)])).toEqual([30, 31, [{ one: 1 }]]);
    expect(await db.query(`SELECT id, note FROM port_things WHERE id IN (30, 31) ORDER BY id`)).toEqual([
      { id: 30, note: "second" },
      { id: 31, note: "second" },
    ]);
  });
});
