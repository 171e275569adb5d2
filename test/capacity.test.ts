/**
 * docs/capacity.md prices each kind of request from its counts (Data API calls, S3 and SQS requests, Lambda
 * invocations); this keeps its table to what one request of each kind costs on the deployed shape (the bundles as
 * SST builds them, against the emulators behind counting proxies). `npx tsx bench/capacity.ts` prints the table anew.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCapacityHarness, total, type CapacityHarness, type Cost } from "./support/capacity-harness";
import { measurePost, requestKinds, type RequestKind } from "./support/capacity-requests";

let h: CapacityHarness;
let measured: Record<RequestKind, Cost>;

beforeAll(async () => {
  h = await startCapacityHarness();
  await measurePost(h, 0); // cold starts and the tenant's custody proof are not what a request costs
  measured = await measurePost(h, 1);
}, 600_000);
afterAll(() => h?.close());

/** The rows between `<!-- capacity-counts -->` and `<!-- /capacity-counts -->`: kind | Data API | S3 | SQS | Lambda. */
const documented = async () => {
  const doc = await readFile(path.resolve(import.meta.dirname, "../docs/capacity.md"), "utf8");
  const table = /<!-- capacity-counts -->([\s\S]*?)<!-- \/capacity-counts -->/.exec(doc)?.[1] ?? "";
  const rows = table.split("\n").filter((line) => /^\|\s*`?[a-z]+`?\s*\|\s*\d/.test(line));
  return Object.fromEntries(
    rows.map((line) => {
      const [kind, ...numbers] = line.split("|").slice(1, -1).map((cell) => cell.trim().replaceAll("`", ""));
      return [kind, numbers.slice(0, 4).map(Number)];
    }),
  ) as Record<string, number[]>;
};

describe("docs/capacity.md", () => {
  it("states, per kind of request, the Data API calls, S3 and SQS requests and Lambda invocations that one request costs on the deployed shape", async () => {
    const table = await documented();
    const actual = Object.fromEntries(
      requestKinds.map((kind) => {
        const cost = measured[kind];
        return [kind, [total(cost.dataApi), total(cost.s3), total(cost.sqs), cost.invocations.length]];
      }),
    );
    expect(table).toEqual(actual);
  });
});
