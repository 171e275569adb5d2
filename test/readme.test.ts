import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configVariables } from "../core/config/variables";
import { errorStatus } from "../core/http/errors";
import { openApiDocument } from "../core/openapi/openapi-document";
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

  it("says list items carry waveform overviews of at most 256 points and a single post the full resolution, as the description does", () => {
    expect(readme).toContain("List items (`GET /api/v1/posts` and `/replies`) carry an overview of at most 256 points");
    expect(readme).toMatch(/about 20 points per second\) on `GET \/api\/v1\/posts\/\{postId\}`/);
    const paths = (openApiDocument(routeList) as { paths: Record<string, Record<string, { description?: string }>> }).paths;
    for (const list of ["/api/v1/posts", "/api/v1/posts/{postId}/replies"]) expect(paths[list]!.get!.description).toContain("overview of at most 256 points");
    expect(paths["/api/v1/posts/{postId}"]!.get!.description).toContain("full resolution");
  });

  it("names the two commands: npm start and npm test", () => {
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm test");
  });
});
