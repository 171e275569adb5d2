import { describe, expect, it } from "vitest";
import { routeList } from "../functions/routes";
import { routeScopes } from "../core/runtime/lambda/function-scopes";
import { adaptersIn, bundleBudgetBytes, bundleFunction, functionFiles, type AdapterName } from "./support/lambda-bundle";

/** What each port's Lambda adapter brings into a bundle. */
const portAdapters: Record<string, AdapterName[]> = { sql: ["Data API client"], blobs: ["S3 client"] };

describe("Lambda bundles, built as SST v2 builds them (esbuild, ESM, AWS SDK bundled, minified)", () => {
  it.each(routeList.map((route) => [route.file, route] as const))(
    "functions/%s.ts carries the adapters of the ports its route uses, and no other runtime's",
    async (file, route) => {
      const carried = adaptersIn((await bundleFunction(file)).inputs);
      const expected = new Set(route.uses.flatMap((port) => portAdapters[port] ?? []));
      // A route that dispatches (create, PATCH) sends through SQS; the system route runs passes and sends nothing.
      if (routeScopes(route).includes("dispatch")) expected.add("SQS client");
      // Only a route that runs processing stages itself (the system route) carries the providers; create and PATCH
      // plan over the provider catalog and dispatch.
      if (routeScopes(route).includes("stages")) expected.add("provider adapters").add("Transcribe client");
      expect(carried.sort()).toEqual([...expected].sort());
    },
  );

  it("the stage function carries the providers it runs stages with", async () => {
    expect(adaptersIn((await bundleFunction("process-queue")).inputs)).toEqual(expect.arrayContaining(["provider adapters", "Transcribe client"]));
  });

  it("the store janitor carries the Data API and S3 clients it sweeps with, and no other adapter", async () => {
    expect(adaptersIn((await bundleFunction("store-janitor")).inputs).sort()).toEqual(["Data API client", "S3 client"]);
  });

  // A job's root builds its ports without the HTTP pipeline (core/runtime/lambda/lambda-deps.ts).
  it.each(["process-queue", "dead-letter", "sweep", "store-janitor"])(
    "functions/%s.ts, a job's root, bundles no HTTP pipeline: no core/http/ module, no idempotency claim, no rate-limit take",
    async (file) => {
      const pipeline = /core\/http\/|core\/idempotency\/|core\/rate-limit\/(take-|client-ip)/;
      expect((await bundleFunction(file)).inputs.filter((input) => pipeline.test(input))).toEqual([]);
    },
  );

  it("a route's root does bundle the pipeline that job roots leave out (the pattern above finds it)", async () => {
    const inputs = (await bundleFunction("get-post")).inputs;
    for (const module of ["core/http/pipeline.ts", "core/idempotency/claim.ts", "core/rate-limit/take-with-first-query.ts"]) expect(inputs).toContain(module);
  });

  // health probes both stores (docs/decisions.md#health-and-reference), with one signed request each.
  it.each(["health", "openapi", "reference", "reference-script", "not-found"])("functions/%s.ts loads no AWS client", async (file) => {
    expect(adaptersIn((await bundleFunction(file)).inputs)).toEqual([]);
  });

  it.each(["process-queue", "dead-letter", "sweep", "store-janitor", "migrate", "not-found"])("functions/%s.ts carries no Node host adapter", async (file) => {
    const carried = adaptersIn((await bundleFunction(file)).inputs);
    expect(carried.filter((name) => ["PGlite", "node-postgres", "file blob store", "Node host"].includes(name))).toEqual([]);
  });

  it.each(functionFiles())(`functions/%s.ts bundles to at most ${bundleBudgetBytes.toLocaleString("en")} bytes (issue 10's budget)`, async (file) => {
    expect((await bundleFunction(file)).bytes.length).toBeLessThanOrEqual(bundleBudgetBytes);
  });
});
