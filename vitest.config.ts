import { defineConfig } from "vitest/config";

export default defineConfig({
  // Migration files import as text, as esbuild's `text` loader bundles them for the deploy-time migration function.
  plugins: [{ name: "sql-text", transform: (code, id) => (id.endsWith(".sql") ? `export default ${JSON.stringify(code)};` : undefined) }],
  test: {
    include: ["core/**/*.test.ts", "functions/**/*.test.ts", "stacks/**/*.test.ts", "test/**/*.test.ts", "client/test/**/*.test.ts", "examples/**/*.test.ts"],
    // PGlite's templates, made once for the run rather than by every file (test/support/pglite-templates.ts).
    globalSetup: ["test/support/pglite-templates-setup.ts"],
    // Suites start servers and databases; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // Type tests (`*.test-d.ts`, expectTypeOf) are checked by tsc as part of the run.
    typecheck: { enabled: true, include: ["core/**/*.test-d.ts", "functions/**/*.test-d.ts", "test/**/*.test-d.ts"] },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
