import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { routeImpls, routeList } from "./routes";

describe("the route table", () => {
  it("lists every route file, each under the file name its policy gives", async () => {
    const named = Object.values(routeImpls).map((impl) => impl.route.file).sort();
    const onDisk = (await readdir(import.meta.dirname)).filter((f) => f.endsWith(".ts") && !/\.test(-d)?\.ts$|^routes\.ts$/.test(f));
    for (const file of named) expect(onDisk).toContain(`${file}.ts`);
  });

  it("a route that is rate limited or honours Idempotency-Key declares the sql port it needs", () => {
    for (const route of routeList) {
      if (route.rateLimit || ("idempotent" in route && route.idempotent)) expect(route.uses, route.file).toContain("sql");
    }
  });

  it("each route file's Lambda handler is built from the same implementation the table holds", async () => {
    for (const impl of Object.values(routeImpls)) {
      const mod = (await import(`./${impl.route.file}.ts`)) as { default: unknown; route: unknown; handler: unknown };
      expect(mod.default).toBe(impl);
      expect(mod.route).toBe(impl.route);
      expect(typeof mod.handler).toBe("function");
    }
  });
});
