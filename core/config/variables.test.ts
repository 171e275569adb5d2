import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readVariables } from "./read-variables";
import { configurationDocPath, configurationTable, documentedConfigurationTable } from "../../scripts/readme-table";
import { configVariables, type VariableName } from "./variables";

describe("the one variable table", () => {
  it("docs/configuration.md's Configuration table is exactly the one generated from it, every row both ways (npm run readme:config)", async () => {
    expect(documentedConfigurationTable(await readFile(configurationDocPath, "utf8"))).toBe(configurationTable());
  });

  it("names each variable once", () => {
    const names = configVariables.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it("a default is written once, in its row: an unset variable reads as it, and the documented table shows it", () => {
    const read = readVariables({}, () => undefined);
    const table = configurationTable();
    const defaulted = configVariables.filter((row) => row.default !== undefined);
    expect(defaulted.length).toBeGreaterThan(0);
    for (const row of defaulted) {
      expect(read(row.name as VariableName)).toBe(row.default);
      expect(table).toContain(`| \`${String(row.default)}\` |`);
      const repeated = new RegExp(`default:? \`?${String(row.default).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`);
      expect(row.rule, row.name).not.toMatch(repeated);
      expect(row.description, row.name).not.toMatch(repeated);
    }
  });

  it("a value set reads as its parsed value, not the default", () => {
    expect(readVariables({ PORT: "8080", HOST: " 0.0.0.0 " }, () => undefined)("PORT")).toBe(8080);
    expect(readVariables({ PORT: "8080", HOST: " 0.0.0.0 " }, () => undefined)("HOST")).toBe("0.0.0.0");
  });

  it("the parser reads no variable that is not a row", () => {
    const read = readVariables({}, () => undefined);
    expect(() => read("SVC_NOT_A_ROW" as VariableName)).toThrow(/not in the variable table/);
    expect(read("DATABASE_URL")).toBeUndefined();
  });
});
