/**
 * What each kind of request costs on AWS (`npm run bench`; alone: `npx tsx bench/capacity.ts`): the deployed-shape
 * bundles run as Lambda environments against the emulators behind counting proxies (test/support/capacity-harness.ts),
 * BENCH_CAPACITY_POSTS posts (default 5, after one to warm every environment) through upload, create, read, list,
 * PATCH with every stage, the pass and the mp3 playback. Prints per kind the Data API calls, S3 and SQS requests,
 * Lambda invocations and their median duration here, each function's peak memory, and the table docs/capacity.md
 * keeps (test/capacity.test.ts holds the document to what one request measures).
 */
import { startCapacityHarness, total, type Cost } from "../test/support/capacity-harness";
import { measurePost, requestKinds, type RequestKind } from "../test/support/capacity-requests";

const posts = Math.max(1, Number(process.env.BENCH_CAPACITY_POSTS ?? 5));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const actions = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([action, n]) => `${action} ${n}`)
    .join(", ");

const h = await startCapacityHarness();
try {
  await measurePost(h, 0); // cold starts, custody proofs, first ffmpeg runs: not what a request costs
  const runs: Record<RequestKind, Cost>[] = [];
  for (let i = 1; i <= posts; i++) runs.push(await measurePost(h, i));
  const rows: Record<string, Record<string, string | number>> = {};
  for (const kind of requestKinds) {
    const costs = runs.map((r) => r[kind]);
    const last = costs.at(-1)!;
    // Per function, its invocations' time in one request (the rendition function runs once per stage), median over requests.
    const byFn = new Map<string, number[]>();
    for (const cost of costs) {
      const sums = new Map<string, number>();
      for (const { fn, ms } of cost.invocations) sums.set(fn, (sums.get(fn) ?? 0) + ms);
      for (const [fn, ms] of sums) byFn.set(fn, [...(byFn.get(fn) ?? []), ms]);
    }
    rows[kind] = {
      "Data API calls": median(costs.map((c) => total(c.dataApi))),
      "S3 requests": median(costs.map((c) => total(c.s3))),
      "SQS requests": median(costs.map((c) => total(c.sqs))),
      "Lambda invocations": median(costs.map((c) => c.invocations.length)),
      "ms per function (median, this machine)": [...byFn].map(([fn, ms]) => `${fn} ${Math.round(median(ms))}`).join(", "),
      "by action": [actions(last.dataApi), actions(last.s3), actions(last.sqs)].filter(Boolean).join("; "),
    };
  }
  console.log(`\nper request, deployed-shape bundles against the emulators (${posts} posts after one to warm up)`);
  console.table(rows);
  const memory = await h.peakMemoryMb();
  console.log("peak memory per function environment (MB, VmHWM):", Object.entries(memory).map(([fn, mb]) => `${fn} ${Math.round(mb)}`).join(", "));
  console.log("\ndocs/capacity.md's table (kind | Data API calls | S3 requests | SQS requests | Lambda invocations):");
  for (const kind of requestKinds) {
    const r = rows[kind]!;
    console.log(`| ${kind} | ${r["Data API calls"]} | ${r["S3 requests"]} | ${r["SQS requests"]} | ${r["Lambda invocations"]} |`);
  }
} finally {
  await h.close();
}
