/**
 * The walks of docs/architecture.md stay true to the code: each names files that exist, at most 20 of them, in an
 * order a reader can follow (every file after the first is imported by one named before it).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const maxFiles = 20;

/** Each `## Walk: ...` section's numbered files: lines `N. [`path`](...)`, paths relative to the repository. */
const walksOf = (markdown: string): Map<string, string[]> => {
  const walks = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of markdown.split("\n")) {
    const heading = /^##\s+(.*)$/.exec(line);
    if (heading) {
      current = /^Walk:/.test(heading[1]!) ? [] : undefined;
      if (current) walks.set(heading[1]!, current);
      continue;
    }
    const step = /^\d+\.\s+\[`([^`]+)`\]/.exec(line);
    if (step && current) current.push(step[1]!);
  }
  return walks;
};

/** The repository files a TypeScript file imports (static, type-only, re-exports and dynamic `import()`). */
const importsOf = (file: string, text: string): string[] =>
  [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)].flatMap((match) => {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), match[1]!));
    return [base, `${base}.ts`, `${base}/index.ts`].filter((candidate) => candidate.endsWith(".ts") && existsSync(path.join(root, candidate))).slice(0, 1);
  });

/** Files of `walk` that no earlier file of it imports (the first file aside). */
const unreached = (walk: readonly string[], read: (file: string) => string): string[] =>
  walk.filter((file, i) => i > 0 && !walk.slice(0, i).some((earlier) => importsOf(earlier, read(earlier)).includes(file)));

const fromDisk = (file: string) => readFileSync(path.join(root, file), "utf8");
const walks = walksOf(fromDisk("docs/architecture.md"));

describe("the walks of docs/architecture.md", () => {
  it("reads walks and imports as the document and the code write them", () => {
    const doc = "## Rooms\n1. [`not/a/walk.ts`](x)\n## Walk: a\n1. [`a.ts`](a)\n2. [`b.ts`](b)\n## Walk: b\n1. [`c.ts`](c)\n";
    expect([...walksOf(doc)]).toEqual([["Walk: a", ["a.ts", "b.ts"]], ["Walk: b", ["c.ts"]]]);
    const imports = importsOf("functions/get-post.ts", 'import { x } from "../core/posts/post-store";\nconst y = await import("../core/sql/rds-data");\nimport "./missing";');
    expect(imports).toEqual(["core/posts/post-store.ts", "core/sql/rds-data.ts"]);
  });

  it("finds an order a reader cannot follow: a file no earlier file imports", () => {
    expect(unreached(["functions/get-post.ts", "core/posts/post-store.ts", "core/webhooks/outbox.ts"], fromDisk)).toEqual(["core/webhooks/outbox.ts"]);
  });

  it("has the two walks: a GET from the Lambda handler to SQL and back, an enrichment pass from the queue to the webhook", () => {
    const firsts = [...walks.values()].map((walk) => walk[0]);
    expect(firsts).toEqual(["functions/get-post.ts", "functions/process-queue.ts"]);
    const get = walks.get([...walks.keys()][0]!)!;
    expect(get).toContain("core/sql/rds-data.ts");
    const pass = walks.get([...walks.keys()][1]!)!;
    expect(pass).toContain("core/processing/worker.ts");
    expect(pass.at(-1)).toMatch(/^core\/webhooks\//);
  });

  it.each([...walks])(`%s names at most ${maxFiles} files, each of which exists, none twice`, (_name, walk) => {
    expect(walk.length).toBeLessThanOrEqual(maxFiles);
    expect(walk.filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
    expect(new Set(walk).size).toBe(walk.length);
  });

  it.each([...walks])("%s: every file after the first is imported by a file named before it", (_name, walk) => {
    expect(unreached(walk, fromDisk)).toEqual([]);
  });
});
