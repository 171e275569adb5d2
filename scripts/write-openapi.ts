import { writeFile } from "node:fs/promises";
import path from "node:path";
import { routeList } from "../functions/routes";
import { openApiDocument } from "../core/openapi/openapi-document";

/** `npm run openapi`: regenerates functions/openapi.json from the route table (a test fails while it is stale). */
export const openApiJsonPath = path.resolve(import.meta.dirname, "../functions/openapi.json");
export const openApiJson = () => `${JSON.stringify(openApiDocument(routeList), null, 2)}\n`;

if (process.argv[1] === import.meta.filename) {
  await writeFile(openApiJsonPath, openApiJson());
  process.stdout.write(`wrote ${path.relative(process.cwd(), openApiJsonPath)}\n`);
}
