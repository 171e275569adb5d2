/**
 * A source file holds one idea, and at most 300 lines of it: a longer one is split by what it does. The variable
 * table (core/config/variables.ts) is the one exception, a row per environment variable; the client's generated
 * types are written by `npm run openapi`, not by hand.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");
const maxLines = 300;
const exempt = new Set(["core/config/variables.ts", "client/src/generated/openapi.ts"]);

/** Where source lives: the service, its functions, stacks, scripts, the client, the examples and the benchmark. */
const sourceRoots = ["core", "functions", "stacks", "scripts", "client/src", "client/scripts", "examples", "bench", "sst.config.ts"];
const isSource = (file: string) => /\.(ts|tsx|js|mjs|cjs)$/.test(file) && !/\.test(-d)?\.ts$/.test(file) && !file.includes("node_modules/");

const sourceFiles = (): string[] =>
  execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ...sourceRoots], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter((file) => file !== "" && isSource(file) && existsSync(path.join(root, file)));

const linesOf = (text: string) => (text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0));

describe("source files stay short", () => {
  it("counts lines as an editor shows them", () => {
    expect(linesOf("a\nb\n")).toBe(2);
    expect(linesOf("a\nb")).toBe(2);
    expect(linesOf("")).toBe(0);
  });

  it("finds the source files of every room, and no test", () => {
    const files = sourceFiles();
    for (const expected of ["core/config/variables.ts", "functions/get-post.ts", "stacks/service-stack.ts", "client/src/client.ts", "bench/http-load.ts"]) {
      expect(files).toContain(expected);
    }
    expect(files.filter((file) => file.endsWith(".test.ts"))).toEqual([]);
  });

  it(`no source file is over ${maxLines} lines, but the variable table`, () => {
    const long = sourceFiles()
      .filter((file) => !exempt.has(file))
      .map((file) => ({ file, lines: linesOf(readFileSync(path.join(root, file), "utf8")) }))
      .filter(({ lines }) => lines > maxLines);
    expect(long).toEqual([]);
  });
});
