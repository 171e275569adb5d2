import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readVariables } from "./read-variables";
import { configurationTable, readmeConfigurationTable, readmePath } from "./readme-table";
import { configVariables } from "./variables";

describe("the one variable table", () => {
  it("the README's Configuration table is exactly the one generated from it, every row both ways (npm run readme:config)", async () => {
    expect(readmeConfigurationTable(await readFile(readmePath, "utf8"))).toBe(configurationTable());
  });

  it("names each variable once", () => {
    const names = configVariables.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it("the parser reads no variable that is not a row", () => {
    const read = readVariables({}, () => undefined);
    expect(() => read("SVC_NOT_A_ROW")).toThrow(/not in the variable table/);
    expect(read("DATABASE_URL")).toBeUndefined();
  });
});
