import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../..");
const skippedDirs = new Set(["node_modules", ".git", ".data", ".sst", ".build", "cdk.out", "coverage"]);

/** Where `process.env` may appear: the door itself, and what is not the service (tests, stacks, the benchmark). */
const allowed = [
  /^core\/config\/environment\.ts$/,
  /\.(test|bench|suite)\.ts$/,
  /\.test-d\.ts$/,
  /^test\//,
  /^stacks\//,
  /^sst\.config\.ts$/,
  /^bench\//,
  // Packages of their own, on the tenant's side of the API: they have no variable table of ours.
  /^client\//,
  /^examples\//,
];

const sources = (dir: string): string[] =>
  readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return skippedDirs.has(entry.name) ? [] : sources(relative);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) ? [relative] : [];
  });

/** A line of code that reads `process.env` (a comment may name it). */
const readsEnvironment = (line: string): boolean => /\bprocess\.env\b|\bprocess\[["'`]env/.test(line) && !/^\s*(\/\/|\/?\*)/.test(line);

const readsOf = (file: string): string[] =>
  readFileSync(path.join(root, file), "utf8")
    .split("\n")
    .flatMap((line, index) => (readsEnvironment(line) ? [`${file}:${index + 1}`] : []));

describe("one door for configuration", () => {
  it("no process.env outside core/config/environment.ts (tests, stacks and the benchmark excepted): every variable is read through the variable table", () => {
    const files = sources("").filter((file) => !allowed.some((pattern) => pattern.test(file)));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap(readsOf)).toEqual([]);
  });

  it("the rule sees a read, and not a comment that names it", () => {
    expect(readsEnvironment('const port = process.env.PORT ?? "3000";')).toBe(true);
    expect(readsEnvironment("  const env = process[\"env\"];")).toBe(true);
    expect(readsEnvironment(" * which reads process.env on every creation")).toBe(false);
    expect(readsEnvironment("  // process.env is read once")).toBe(false);
  });
});
