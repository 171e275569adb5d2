import { defineRoute } from "../core/http/route";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";

export const route = defineRoute({
  file: "reference-script",
  method: "GET",
  path: "/api/reference/standalone.js",
  summary: "The reference page's script, served locally (no CDN)",
  auth: "public",
  rateLimit: null,
  uses: [],
  status: 200,
  produces: "text/javascript",
  internal: true,
});

let script: Promise<Buffer> | undefined;
// The package's exports hide its browser bundle, so find it beside the package's entry point.
const loadScript = () =>
  (script ??= readFile(
    path.join(path.dirname(createRequire(import.meta.url).resolve("@scalar/api-reference")), "browser/standalone.js"),
  ));

const impl = implement(route, async () => ({
  raw: {
    status: 200,
    headers: { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=86400" },
    body: await loadScript(),
  },
}));

export default impl;
export const handler = lambda(impl, {});
