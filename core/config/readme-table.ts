import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { configVariables, type ConfigVariable } from "./variables";

/**
 * The README's Configuration table, generated from the variable table: one line per row, except that consecutive
 * rows with the same description and requirement share a line. `npm run readme:config` writes it into the README.
 */
export const configurationTable = (rows: readonly ConfigVariable[] = configVariables): string => {
  const required = (row: ConfigVariable) => (row.required ? "yes" : (row.requiredWhen ?? ""));
  const lines: { names: string[]; required: string; description: string }[] = [];
  for (const row of rows) {
    const last = lines.at(-1);
    if (last && last.description === row.description && last.required === required(row)) last.names.push(row.name);
    else lines.push({ names: [row.name], required: required(row), description: row.description });
  }
  const body = lines.map((l) => `| ${l.names.map((n) => `\`${n}\``).join(", ")} |${l.required ? ` ${l.required} ` : " "}| ${l.description} |`);
  return ["| Variable | Required | Rule |", "|---|---|---|", ...body].join("\n");
};

export const readmePath = path.resolve(import.meta.dirname, "../../README.md");

/** The README's current Configuration table: from its header line to the first blank line. */
export const readmeConfigurationTable = (readme: string): string => {
  const start = readme.indexOf("| Variable | Required | Rule |");
  if (start < 0) throw new Error("README.md has no Configuration table");
  const end = readme.indexOf("\n\n", start);
  return readme.slice(start, end < 0 ? undefined : end);
};

if (process.argv[1] === import.meta.filename) {
  const readme = await readFile(readmePath, "utf8");
  await writeFile(readmePath, readme.replace(readmeConfigurationTable(readme), configurationTable()));
  process.stdout.write("README.md: Configuration table regenerated from core/config/variables.ts\n");
}
