import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const clientDir = path.resolve(import.meta.dirname, "..");

describe("the client package", () => {
  it("builds with tsc to ESM JavaScript with .d.ts, and the build loads in plain Node with no dependency", async () => {
    const manifest = JSON.parse(await readFile(path.join(clientDir, "package.json"), "utf8"));
    expect(manifest.type).toBe("module");
    expect(manifest.dependencies ?? {}).toEqual({});
    const out = await mkdtemp(path.join(tmpdir(), "svc-client-build-"));
    try {
      // A package of its own: its manifest beside its build, outside this repository's node_modules.
      await cp(path.join(clientDir, "package.json"), path.join(out, "package.json"));
      await run(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", path.join(clientDir, "tsconfig.json"), "--outDir", path.join(out, "dist")]);
      expect(await readFile(path.join(out, manifest.exports["."].types), "utf8")).toContain("export { createClient");
      const script = `import("${path.join(out, "dist/index.js")}").then((m) => console.log(Object.keys(m).sort().join(",")))`;
      const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: out });
      expect(stdout.trim().split(",")).toEqual(expect.arrayContaining(["createClient", "SvcError", "verifyWebhook", "toWebVTT"]));
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
