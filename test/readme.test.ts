import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { configVariables } from "../core/config/variables";
import { errorStatus } from "../core/http/errors";
import { openApiDocument } from "../core/openapi/openapi-document";
import { routeList } from "../functions/routes";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const readme = read("README.md");
const configuration = read("docs/configuration.md");
const errors = read("docs/errors.md");

/** The README's text outside its code blocks, and its code blocks, apart. */
const fenced = readme.split(/^```.*$/m);
const prose = fenced.filter((_, i) => i % 2 === 0).join("\n");
const code = fenced.filter((_, i) => i % 2 === 1).join("\n");

describe("the README and the reference docs stay true", () => {
  it.each(configVariables.map((v) => v.name))("docs/configuration.md documents the environment variable %s", (name) => {
    expect(configuration).toContain(`\`${name}\``);
  });

  it.each(Object.entries(errorStatus))("docs/errors.md documents the error code %s with its status %i", (code, status) => {
    expect(errors).toMatch(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
  });

  it("the README links the reference it no longer holds: every variable, every error, the benchmarks", () => {
    for (const doc of ["docs/configuration.md", "docs/errors.md", "docs/benchmarks.md"]) {
      expect(readme).toContain(`](${doc})`);
      expect(read("docs/README.md")).toContain(`](${doc.slice("docs/".length)})`);
    }
    expect(readme).not.toContain("| Variable | Required |");
    expect(readme).not.toMatch(/^\| code \| status \|/m);
  });

  it.each(routeList.filter((r) => !("internal" in r && r.internal)).map((r) => [r.method, r.path]))("documents the route %s %s", (_, routePath) => {
    expect(readme).toContain(routePath.split("?")[0]!);
  });

  it("the routes table's Limit column names each route's rate-limit class, as the route table declares it", () => {
    const rows = [...readme.matchAll(/^\| ((?:GET|HEAD|POST|PATCH)(?:, (?:GET|HEAD|POST|PATCH))*) \| ([^|]+) \| [^|]+ \| ([^|]+) \|/gm)];
    expect(rows.length).toBeGreaterThan(8);
    for (const [, methods, paths, limit] of rows) {
      for (const path of [...paths!.matchAll(/`([^`?]+)[^`]*`/g)].map((m) => m[1]!)) {
        const route = routeList.find((r) => r.path === path && methods!.split(", ").includes(r.method));
        expect(route, `${methods} ${path}`).toBeDefined();
        expect(limit!.trim().split(/[ ,]/)[0], `${methods} ${path}`).toBe(("rateLimit" in route! && route.rateLimit) || "none");
      }
    }
  });

  it("says list items carry waveform overviews of at most 256 points and a single post the full resolution, as the description does", () => {
    expect(readme).toContain("List items (`GET /api/v1/posts` and `/replies`) carry an overview of at most 256 points");
    expect(readme).toMatch(/about 20 points per second\) on `GET \/api\/v1\/posts\/\{postId\}`/);
    const paths = (openApiDocument(routeList) as { paths: Record<string, Record<string, { description?: string }>> }).paths;
    for (const list of ["/api/v1/posts", "/api/v1/posts/{postId}/replies"]) expect(paths[list]!.get!.description).toContain("overview of at most 256 points");
    expect(paths["/api/v1/posts/{postId}"]!.get!.description).toContain("full resolution");
  });

  it("names the commands: npm ci and npm start to run it, npm test to test it", () => {
    expect(code).toContain("npm ci");
    expect(code).toContain("npm start");
    expect(code).toContain("npm test");
  });

  it("opens with a contents list that links every section of the README, in order", () => {
    const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]!).filter((title) => title !== "Contents");
    const anchor = (title: string) => title.toLowerCase().replace(/[^\p{L}\p{N} -]/gu, "").replace(/ /g, "-");
    const contents = readme.slice(readme.indexOf("## Contents"), readme.indexOf("\n## ", readme.indexOf("## Contents") + 1));
    expect(readme.indexOf("## Contents")).toBeLessThan(readme.indexOf(`## ${sections[0]}`));
    const linked = [...contents.matchAll(/\]\(#([\w-]+)\)/g)].map((m) => m[1]!);
    for (const title of sections) expect(linked, title).toContain(anchor(title));
  });

  it("uses one host name, the one the server's log prints: 127.0.0.1, never localhost", () => {
    expect(readme).toContain("http://127.0.0.1:3000");
    expect(readme).not.toMatch(/localhost/);
    expect(read("local.env")).toMatch(/^SVC_PUBLIC_BASE_URL=http:\/\/127\.0\.0\.1:3000$/m);
  });

  it("makes the test clip before the first command that uploads it, with the ffmpeg that npm installed on any platform", () => {
    const made = code.indexOf(`"$FFMPEG" -loglevel error -f lavfi -i sine=duration=3 "$WORK/clip.mp3"`);
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThan(code.indexOf("clip.mp3;type="));
    expect(code).toContain(`FFMPEG=$(node -e "console.log(require('@ffmpeg-installer/ffmpeg').path)")`);
    expect(readme).not.toMatch(/@ffmpeg-installer\/(linux|darwin|win32)-/);
  });

  it("writes the recipes' clips and scripts into a temporary folder, never the repository", () => {
    expect(code).toContain("WORK=$(mktemp -d)");
    for (const line of code.split("\n")) {
      for (const target of line.matchAll(/(?:-o |> |file=@|\$FFMPEG" .* )"?([^\s";]+\.(?:mp3|webm|mjs|log|wav))/g)) expect(target[1], line).toMatch(/^\$WORK\//);
    }
  });

  it("waits for /health before the first request of each walkthrough", () => {
    for (const block of fenced.filter((_, i) => i % 2 === 1).filter((b) => /npm (start|run dev)\b.*&\s*$/m.test(b))) {
      const started = block.search(/npm (start|run dev)\b.*&\s*$/m);
      const waited = block.indexOf("until curl -sf", started);
      expect(waited, block).toBeGreaterThan(started);
      const firstCall = block.slice(started).search(/curl -s (?!f)/);
      if (firstCall >= 0) expect(started + firstCall).toBeGreaterThan(waited);
    }
  });

  it("says how to stop what the walkthrough started and how to reset local data", () => {
    expect(code).toContain("kill -- -$SERVER");
    expect(code).toContain("rm -rf .data");
    expect(readme).toMatch(/resets local data/);
  });
});
