import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

/**
 * The whole project type-checks: vitest runs the TypeScript it is given without checking its types, so a type error
 * in code no `.test-d.ts` file covers would otherwise reach main unseen.
 */
it("the project type-checks with tsc --noEmit", async () => {
  const root = path.resolve(import.meta.dirname, "..");
  const tsc = path.join(root, "node_modules/typescript/bin/tsc");
  const result = await promisify(execFile)(process.execPath, [tsc, "--noEmit", "-p", root], { cwd: root, maxBuffer: 16 * 1024 * 1024 }).then(
    () => "",
    (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}` || String(error),
  );
  expect(result).toBe("");
}, 180_000);
