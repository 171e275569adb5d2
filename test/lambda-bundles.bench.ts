import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, bench, describe } from "vitest";
import { routeList } from "../functions/routes";
import { adaptersIn, bundleBudgetBytes, bundleFunction, functionFiles } from "./support/lambda-bundle";
import { lambdaNodeBinary } from "./support/lambda-node";

/**
 * What a cold start pays per function, bundled as SST v2 bundles it: the bundle's size and the median time to
 * import it (load and initialise its module) over 5 fresh processes of the runtime's Node 22, against issue 10's
 * budgets (at most 1 MB, at most 150 ms), with the CPU time of that import beside it (the wall time grows with
 * whatever else the machine runs; the CPU time much less). The size budget is a test too (lambda-bundles.test.ts). Printed as a table by `npm run bench`.
 */
const files = [...routeList.map((r) => r.file), ...functionFiles().filter((file) => !routeList.some((r) => r.file === file))];
const importBudgetMs = 150;
const processes = 5;
let dir: string;

/** Wall time of the import, and the CPU time it took (user + system), which other work on the machine does not inflate. */
const importMs = (file: string): { wall: number; cpu: number } => {
  const script = `const t = performance.now(), c = process.cpuUsage(); await import(${JSON.stringify(pathToFileURL(file).href)}); const u = process.cpuUsage(c); process.stdout.write(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));`;
  return JSON.parse(execFileSync(lambdaNodeBinary(), ["--input-type=module", "-e", script], { encoding: "utf8" })) as { wall: number; cpu: number };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "svc-bundles-"));
  const rows: Record<string, Record<string, number | string>> = {};
  for (const file of files) {
    const { bytes, inputs } = await bundleFunction(file);
    const target = path.join(dir, `${file}.mjs`);
    await writeFile(target, bytes);
    const times = Array.from({ length: processes }, () => importMs(target));
    const ms = median(times.map((t) => t.wall));
    const cpuMs = median(times.map((t) => t.cpu));
    rows[file] = {
      bytes: bytes.length,
      "≤ 1 MB": bytes.length <= bundleBudgetBytes ? "yes" : "NO",
      "import ms (median of 5)": Math.round(ms),
      "≤ 150 ms": ms <= importBudgetMs ? "yes" : "NO",
      "import CPU ms": Math.round(cpuMs),
      adapters: adaptersIn(inputs).join(", "),
    };
  }
  console.table(rows);
}, 600_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe("Lambda bundles", () => {
  bench("printed above: size and median import time per function", () => {}, { iterations: 1, time: 0 });
});
