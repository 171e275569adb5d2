import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { variableScopes } from "../core/config/variable-scopes";
import { configVariables, type ConfigVariable } from "../core/config/variables";

/**
 * The Configuration tables of docs/configuration.md, generated from the variable table: the scopes (what a function
 * reaches), then one line per variable (with whether `sst deploy` takes it from its environment), except that
 * consecutive rows with the same description, requirement, scopes, default and deploy share a line. `npm run
 * readme:config` writes them into that file.
 */
export const configurationTable = (rows: readonly ConfigVariable[] = configVariables): string => {
  const cells = (row: ConfigVariable) => ({
    required: row.required ? "yes" : (row.requiredWhen ?? ""),
    scopes: row.scopes.map((scope) => `\`${scope}\``).join(", "),
    default: row.default === undefined ? "" : `\`${String(row.default)}\``,
    deploy: row.deploy ? "yes" : "",
    description: row.description,
  });
  const lines: ({ names: string[] } & ReturnType<typeof cells>)[] = [];
  for (const row of rows) {
    const last = lines.at(-1);
    const line = cells(row);
    if (last && (Object.keys(line) as (keyof typeof line)[]).every((key) => last[key] === line[key])) last.names.push(row.name);
    else lines.push({ names: [row.name], ...line });
  }
  const legend = Object.entries(variableScopes).map(([scope, meaning]) => `| \`${scope}\` | ${meaning} |`);
  const cell = (text: string) => (text ? ` ${text} ` : " ");
  const body = lines.map(
    (l) => `| ${l.names.map((n) => `\`${n}\``).join(", ")} |${cell(l.required)}| ${l.scopes} |${cell(l.default)}|${cell(l.deploy)}| ${l.description} |`,
  );
  return [scopeHeader, "|---|---|", ...legend, "", variableHeader, "|---|---|---|---|---|---|", ...body].join("\n");
};

const scopeHeader = "| Scope | Functions that reach it |";
const variableHeader = "| Variable | Required | Scopes | Default | Set at deploy | Rule |";

/** Where the variable table lives: the reference page on configuration, linked from the README. */
export const configurationDocPath = path.resolve(import.meta.dirname, "../docs/configuration.md");

/** A file's current Configuration tables: from the scope table's header to the blank line after the variables'. */
export const documentedConfigurationTable = (readme: string): string => {
  const start = readme.indexOf(scopeHeader);
  const variables = readme.indexOf(variableHeader, start);
  if (start < 0 || variables < 0) throw new Error("docs/configuration.md has no Configuration tables (scopes, then variables)");
  const end = readme.indexOf("\n\n", variables);
  return readme.slice(start, end < 0 ? undefined : end);
};

if (process.argv[1] === import.meta.filename) {
  const doc = await readFile(configurationDocPath, "utf8");
  await writeFile(configurationDocPath, doc.replace(documentedConfigurationTable(doc), configurationTable()));
  process.stdout.write("docs/configuration.md: Configuration table regenerated from core/config/variables.ts\n");
}
