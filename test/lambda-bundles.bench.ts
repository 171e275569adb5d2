import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { routeList } from "../functions/routes";

/**
 * What a cold start pays per function: the bundle's size (printed) and the time to load and initialise its module
 * (benchmarked; a fresh copy of the bundle is imported each time so nothing is cached).
 */
const root = path.resolve(import.meta.dirname, "..");
const files = ["get-post", "create-post", "upload-audio", "get-audio"];
let dir: string;
const bundles = new Map<string, Uint8Array>();
let copy = 0;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "svc-bundles-"));
  const sizes: Record<string, string> = {};
  for (const route of routeList) {
    const result = await build({
      entryPoints: [path.join(root, "functions", `${route.file}.ts`)],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      minify: true,
      write: false,
      logLevel: "silent",
      // The Lambda runtime ships the AWS SDK v3; SST leaves it out of bundles.
      external: ["@aws-sdk/*"],
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    });
    bundles.set(route.file, result.outputFiles[0]!.contents);
    sizes[route.file] = `${(result.outputFiles[0]!.contents.length / 1024).toFixed(0)} KiB`;
  }
  console.table(sizes);
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe("Lambda module init (cold import of the bundle)", () => {
  for (const file of files) {
    bench(file, async () => {
      const target = path.join(dir, `${file}-${copy++}.mjs`);
      await writeFile(target, bundles.get(file)!);
      await import(pathToFileURL(target).href);
    }, { iterations: 10, time: 0 });
  }
});
