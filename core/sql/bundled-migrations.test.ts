import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bundledMigrations } from "./bundled-migrations";

const dir = path.resolve(import.meta.dirname, "../../migrations");

describe("bundled migrations", () => {
  it("are every file of migrations/, byte for byte, so the deploy step applies what the Node host applies", async () => {
    const names = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
    expect(bundledMigrations.map((m) => m.name).sort(), "add each migrations/*.sql file to core/sql/bundled-migrations.ts").toEqual(names);
    for (const m of bundledMigrations) expect(m.sql).toBe(await readFile(path.join(dir, m.name), "utf8"));
  });
});
