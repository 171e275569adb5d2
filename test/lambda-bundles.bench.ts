import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { routeList } from "../functions/routes";
import { adaptersIn, bundleFunction } from "./support/lambda-bundle";

/**
 * What a cold start pays per function, bundled as SST v2 bundles it: the bundle's size and the median time to
 * import it (load and initialise its module) over 5 fresh Node processes. Printed as a table by `npm run bench`.
 */
const files = [...routeList.map((r) => r.file), "process-queue", "dead-letter", "sweep"];
const processes = 5;
let dir: string;

const importMs = (file: string): number => {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }));
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "svc-bundles-"));
  const rows: Record<string, { KiB: number; "import ms (median of 5)": number; adapters: string }> = {};
  for (const file of files) {
    const { bytes, inputs } = await bundleFunction(file);
    const target = path.join(dir, `${file}.mjs`);
    await writeFile(target, bytes);
    const times = Array.from({ length: processes }, () => importMs(target));
    rows[file] = { KiB: Math.round(bytes.length / 1024), "import ms (median of 5)": Math.round(median(times)), adapters: adaptersIn(inputs).join(", ") };
  }
  console.table(rows);
}, 600_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe("Lambda bundles", () => {
  bench("printed above: size and median import time per function", () => {}, { iterations: 1, time: 0 });
});
