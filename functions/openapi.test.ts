import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { openApiJson, openApiJsonPath } from "../core/runtime/write-openapi";

describe("the served OpenAPI description", () => {
  it("is the one generated from the route table (run `npm run openapi` after changing a route or a schema)", async () => {
    expect(await readFile(openApiJsonPath, "utf8")).toBe(openApiJson());
  });
});
