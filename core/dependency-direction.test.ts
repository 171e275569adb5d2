import { createRequire } from "node:module";
import path from "node:path";
import { cruise, type ICruiseResult } from "dependency-cruiser";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const ruleSet = createRequire(import.meta.url)(path.join(root, ".dependency-cruiser.cjs"));

/**
 * The dependency direction of .dependency-cruiser.cjs, in CI: no cycle between folders or modules, domain code
 * never imports an adapter (PGlite, Postgres, the Data API, the file or S3 store, an AWS SDK client), the HTTP
 * edge or a runtime, and core never imports functions/ (entry points aside).
 */
describe("dependency direction", () => {
  it("has no folder cycle, no module cycle, no domain import of an adapter or runtime, no core import of functions", async () => {
    const cwd = process.cwd();
    process.chdir(root);
    let output: ICruiseResult;
    try {
      const { options, forbidden } = ruleSet;
      output = (await cruise(["core", "functions"], { ...options, ruleSet: { forbidden }, validate: true })).output as ICruiseResult;
    } finally {
      process.chdir(cwd);
    }
    const violations = output.summary.violations.map((v) =>
      `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(" -> ")})` : ""}`,
    );
    expect(violations).toEqual([]);
    expect(output.summary.totalCruised).toBeGreaterThan(100);
  });
});
