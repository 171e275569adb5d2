import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

/**
 * `npm run openapi` (after the description): the client's types, generated from functions/openapi.json with
 * openapi-typescript. `--enum-values` also gives the enums as arrays, so the client's runtime lists (accepted audio
 * types, stage names) come from the description too. A test fails while the file is stale.
 */
export const descriptionPath = path.resolve(import.meta.dirname, "../../functions/openapi.json");
export const clientTypesPath = path.resolve(import.meta.dirname, "../src/generated/openapi.ts");

export const clientTypes = async (): Promise<string> => {
  const description = JSON.parse(await readFile(descriptionPath, "utf8")) as Parameters<typeof openapiTS>[0];
  return COMMENT_HEADER + astToString(await openapiTS(description, { enumValues: true, silent: true }));
};

if (process.argv[1] === import.meta.filename) {
  await writeFile(clientTypesPath, await clientTypes());
  process.stdout.write(`wrote ${path.relative(process.cwd(), clientTypesPath)}\n`);
}
