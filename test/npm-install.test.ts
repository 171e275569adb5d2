/**
 * `npm ci` on a fresh clone, on either Node the README names, says nothing that needs explaining: no package's
 * engines refuse the Node it runs on (EBADENGINE), save the ones the README names and explains, and npm 11 finds no
 * install script that the project has not approved or denied (`allowScripts` in package.json).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { satisfiesNodeRange } from "./support/node-range";

const root = path.resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8"));
const readme = readFileSync(path.join(root, "README.md"), "utf8");

interface Locked {
  version: string;
  engines?: Record<string, string> | string[];
  hasInstallScript?: boolean;
  cpu?: string[];
  optional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const locked = Object.entries(lock.packages as Record<string, Locked>).filter(([where]) => where !== "");
const nameOf = (where: string) => where.slice(where.lastIndexOf("node_modules/") + "node_modules/".length);
const nodeRange = (entry: Locked) => (Array.isArray(entry.engines) ? undefined : entry.engines?.node);

/** The oldest release of each line the README supports (rolldown needs 20.19; watskeburt, 22.13). */
const supported = ["20.19.0", "22.13.0"];

/**
 * Packages npm never installs here, so never checks: those built for wasm32 only, and optional packages that only
 * they depend on.
 */
const wasmOnly = new Set(locked.filter(([, entry]) => entry.cpu?.every((cpu) => cpu === "wasm32")).map(([where]) => nameOf(where)));
const dependents = (name: string) =>
  locked.filter(([, entry]) => name in { ...entry.dependencies, ...entry.optionalDependencies }).map(([where]) => nameOf(where));
const neverInstalled = (where: string, entry: Locked) =>
  wasmOnly.has(nameOf(where)) || (entry.optional === true && dependents(nameOf(where)).every((name) => wasmOnly.has(name)));
/** Declare Node 22 and are explained in the README: their older lines are CommonJS and outgrow the Lambda budget. */
const explained = /^@atproto\//;

describe("npm ci on a fresh clone", () => {
  it("reads engine ranges as npm does", () => {
    expect(satisfiesNodeRange("20.19.0", ">=22")).toBe(false);
    expect(satisfiesNodeRange("22.12.0", "^20.19.0 || >=22.12.0")).toBe(true);
    expect(satisfiesNodeRange("20.18.3", "^20.19.0 || >=22.12.0")).toBe(false);
    expect(satisfiesNodeRange("22.12.0", "^20.19.0 || ^22.13.0 || >=23.5.0")).toBe(false);
    expect(satisfiesNodeRange("20.19.0", "18 || 20 || >=22")).toBe(true);
    expect(satisfiesNodeRange("20.19.0", ">=16 || 14 >=14.17")).toBe(true);
    expect(satisfiesNodeRange("20.19.0", "6.* || 8.* || >= 10.*")).toBe(true);
    expect(satisfiesNodeRange("20.19.0", ">=6 <7 || >=8")).toBe(true);
    expect(satisfiesNodeRange("21.0.0", "^20.12||^22||>=24")).toBe(false);
    expect(() => satisfiesNodeRange("20.19.0", "node@20")).toThrow();
  });

  it("the README names the Node versions supported: 20 and 22", () => {
    expect(readme).toContain("Node.js 20 or 22");
  });

  it.each(supported)("no locked package's engines refuse Node %s (no EBADENGINE), but the @atproto ones the README explains", (version) => {
    const refused = locked
      .filter(([where, entry]) => !neverInstalled(where, entry))
      .filter(([, entry]) => nodeRange(entry) !== undefined && !satisfiesNodeRange(version, nodeRange(entry)!))
      .map(([where, entry]) => `${nameOf(where)}@${entry.version} (${nodeRange(entry)})`);
    expect(refused.filter((name) => !explained.test(name))).toEqual([]);
    if (version.startsWith("22.")) expect(refused).toEqual([]);
    for (const name of new Set(refused.map((r) => r.replace(/@[^@]*$/, "")))) expect(readme).toContain(name.split("/")[0]!);
  });

  it("every locked package with an install script is approved or denied in allowScripts, so npm 11 asks about none", () => {
    const withScripts = new Set(locked.filter(([, entry]) => entry.hasInstallScript).map(([where]) => nameOf(where)));
    const covered = new Set(Object.keys(pkg.allowScripts ?? {}).map((key) => key.replace(/(.)@.*$/, "$1")));
    expect([...withScripts].filter((name) => !covered.has(name))).toEqual([]);
    for (const value of Object.values(pkg.allowScripts)) expect(typeof value).toBe("boolean");
  });
});
