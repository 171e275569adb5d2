import { describe, expect, it } from "vitest";
import { routeList } from "../functions/routes";
import { adaptersIn, bundleFunction, type AdapterName } from "./support/lambda-bundle";

/** What each port's Lambda adapter brings into a bundle. */
const portAdapters: Record<string, AdapterName[]> = { sql: ["Data API client"], blobs: ["S3 client"] };

describe("Lambda bundles, built as SST v2 builds them (esbuild, ESM, AWS SDK bundled, minified)", () => {
  it.each(routeList.map((route) => [route.file, route] as const))(
    "functions/%s.ts carries the adapters of the ports its route uses, and no other runtime's",
    async (file, route) => {
      const carried = adaptersIn((await bundleFunction(file)).inputs);
      const expected = new Set(route.uses.flatMap((port) => portAdapters[port] ?? []));
      // Enrichment may dispatch through SQS, so a route that uses it carries the SQS client.
      if ((route.uses as readonly string[]).includes("enrichment")) expected.add("SQS client");
      expect(carried.sort()).toEqual([...expected].sort());
    },
  );

  it.each(["health", "openapi", "reference"])("functions/%s.ts loads no AWS client it does not use", async (file) => {
    const carried = adaptersIn((await bundleFunction(file)).inputs);
    if (file !== "health") expect(carried).toEqual([]);
    else expect(carried.sort()).toEqual(["Data API client", "S3 client"]); // it probes both stores (CONTRACT.md section 10)
  });

  it.each(["process-queue", "dead-letter", "sweep", "migrate", "not-found"])("functions/%s.ts carries no Node host adapter", async (file) => {
    const carried = adaptersIn((await bundleFunction(file)).inputs);
    expect(carried.filter((name) => ["PGlite", "node-postgres", "file blob store", "Node host"].includes(name))).toEqual([]);
  });
});
