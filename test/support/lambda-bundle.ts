import { readdirSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

export const repoRoot = path.resolve(import.meta.dirname, "../..");

/** Every Lambda entry in functions/ (routes, jobs, the rendition service): each `.ts` file but the route table and tests. */
export const functionFiles = (): string[] =>
  readdirSync(path.join(repoRoot, "functions"))
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts") && name !== "routes.ts")
    .map((name) => name.slice(0, -3))
    .sort();

/** Issue 10's budget: each function's bundle at most 1 MB (decimal). */
export const bundleBudgetBytes = 1_000_000;

/**
 * Bundles `functions/<file>.ts` the way SST v2 bundles a Node.js function: esbuild, ESM for node22, everything
 * bundled (the AWS SDK v3 included), minified, with the createRequire banner SST adds to ESM bundles.
 */
export const bundleFunction = (file: string) => (bundles.get(file) ?? bundles.set(file, bundle(file)).get(file))!;
const bundles = new Map<string, ReturnType<typeof bundle>>();

const bundle = async (file: string) => {
  const result = await build({
    entryPoints: [path.join(repoRoot, "functions", `${file}.ts`)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    mainFields: ["module", "main"],
    minify: true,
    // sst.config.ts turns SST's keepNames off (50 KB less per bundle).
    keepNames: false,
    write: false,
    metafile: true,
    logLevel: "silent",
    // The migration function bundles the SQL files as text, as the stack's esbuild loader does.
    loader: { ".sql": "text" },
    banner: { js: "import { createRequire as topLevelCreateRequire } from 'module';const require = topLevelCreateRequire(import.meta.url);" },
  });
  const output = result.outputFiles[0]!;
  return { inputs: Object.keys(result.metafile.inputs), bytes: output.contents };
};

/** Adapters (and clients) a bundle may or may not carry, by the modules that make them up. */
export const adapters = {
  "Data API client": /node_modules\/@aws-sdk\/client-rds-data\//,
  "S3 client": /node_modules\/@aws-sdk\/client-s3\//,
  "SQS client": /node_modules\/@aws-sdk\/client-sqs\//,
  // What only a function that runs processing stages needs: the providers' adapters and the Transcribe client.
  "provider adapters": /core\/providers\/provider-registry\.ts$/,
  "Transcribe client": /node_modules\/@aws-sdk\/client-transcribe\//,
  PGlite: /node_modules\/@electric-sql\/pglite\/|core\/sql\/pglite\.ts$/,
  "node-postgres": /node_modules\/pg\/|core\/sql\/postgres\.ts$/,
  "file blob store": /core\/blobs\/fs-blob-store\.ts$/,
  "Node host": /core\/runtime\/node\//,
} as const;

export type AdapterName = keyof typeof adapters;

export const adaptersIn = (inputs: readonly string[]): AdapterName[] =>
  (Object.keys(adapters) as AdapterName[]).filter((name) => inputs.some((input) => adapters[name].test(input)));
