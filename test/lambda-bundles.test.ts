import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { routeList } from "../functions/routes";

const root = path.resolve(import.meta.dirname, "..");

/** Modules of the Node host's runtime that must never ride along in a Lambda. */
const foreign = [/node_modules\/@electric-sql\/pglite\//, /core\/sql\/pglite\.ts$/, /core\/sql\/postgres\.ts$/, /node_modules\/pg\//, /core\/blobs\/fs-blob-store\.ts$/, /core\/runtime\/node-/];

/** Bundles a function as SST does (esbuild, ESM, node) and reports what went in. */
const bundle = async (file: string) => {
  const result = await build({
    entryPoints: [path.join(root, "functions", `${file}.ts`)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    write: false,
    metafile: true,
    minify: true,
    logLevel: "silent",
  });
  return { inputs: Object.keys(result.metafile.inputs), bytes: result.outputFiles[0]!.contents.length };
};

describe("Lambda bundles", () => {
  it.each(routeList.map((r) => r.file))("functions/%s.ts bundles without PGlite, node-postgres or the file store", async (file) => {
    const { inputs } = await bundle(file);
    const leaked = inputs.filter((input) => foreign.some((pattern) => pattern.test(input)));
    expect(leaked).toEqual([]);
  });
});
