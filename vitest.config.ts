import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["core/**/*.test.ts", "functions/**/*.test.ts", "stacks/**/*.test.ts", "test/**/*.test.ts"],
    // Suites start servers and databases; two cores, so keep parallelism modest.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
