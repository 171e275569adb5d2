import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { deployedScriptName } from "../core/openapi/reference-script-file";
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

// On Lambda the script sits beside the bundle (no node_modules there; see stacks/service-stack.ts); elsewhere the
// package's exports hide its browser bundle, so find it beside the package's entry point.
const scriptPath = (lambdaTaskRoot: string | undefined) => {
  const deployed = lambdaTaskRoot && path.join(lambdaTaskRoot, deployedScriptName);
  if (deployed && existsSync(deployed)) return deployed;
  return path.join(path.dirname(createRequire(import.meta.url).resolve("@scalar/api-reference")), "browser/standalone.js");
};

let script: Promise<Buffer> | undefined;
let gzipped: Promise<Buffer> | undefined;
const loadScript = (lambdaTaskRoot: string | undefined) => (script ??= readFile(scriptPath(lambdaTaskRoot)));
// 4.3 MB raw is 5.8 MB once base64-encoded for Lambda, at its 6 MB response limit; gzip brings it to about 1.3 MB.
const loadGzipped = (lambdaTaskRoot: string | undefined) => (gzipped ??= loadScript(lambdaTaskRoot).then((raw) => promisify(gzip)(raw)));

const acceptsGzip = (header: string | undefined) =>
  (header ?? "").split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    return (coding === "gzip" || coding === "*") && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
  });

const impl = implement(route, async (call) => {
  const headers = { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=86400", Vary: "Accept-Encoding" };
  const { lambdaTaskRoot } = call.deps.config;
  if (acceptsGzip(call.req.headers["accept-encoding"])) {
    return { raw: { status: 200, headers: { ...headers, "Content-Encoding": "gzip" }, body: await loadGzipped(lambdaTaskRoot) } };
  }
  return { raw: { status: 200, headers, body: await loadScript(lambdaTaskRoot) } };
});

export default impl;
export const handler = lambda(impl, {});
