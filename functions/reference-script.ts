import { readFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";
import { implement } from "../core/http/route-call";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

let script: Promise<Buffer> | undefined;
// The package's exports hide its browser bundle, so find it beside the package's entry point.
const loadScript = () =>
  (script ??= readFile(
    path.join(path.dirname(createRequire(import.meta.url).resolve("@scalar/api-reference")), "browser/standalone.js"),
  ));

const impl = implement(routes.referenceScript, async () => ({
  raw: {
    status: 200,
    headers: { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=86400" },
    body: await loadScript(),
  },
}));

export default impl;
export const handler = lambda(impl);
