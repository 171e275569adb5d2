import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configVariables } from "../core/config/variables";
import { errorStatus } from "../core/http/errors";
import { routeList } from "../functions/routes";

const readme = readFileSync(path.resolve(import.meta.dirname, "../README.md"), "utf8");

describe("the README stays true", () => {
  it.each(configVariables.map((v) => v.name))("documents the environment variable %s", (name) => {
    expect(readme).toContain(`\`${name}\``);
  });

  it.each(Object.entries(errorStatus))("documents the error code %s with its status %i", (code, status) => {
    expect(readme).toMatch(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
  });

  it.each(routeList.filter((r) => !("internal" in r && r.internal)).map((r) => [r.method, r.path]))("documents the route %s %s", (_, routePath) => {
    expect(readme).toContain(routePath.split("?")[0]!);
  });

  it("names the two commands: npm start and npm test", () => {
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm test");
  });
});
