/**
 * The docs that code points at exist: every `docs/<file>.md#<anchor>` named anywhere in the repository, and every
 * relative link in its Markdown, names a file that exists and a heading in it; every `npm run` names a script. No
 * file names the team's old decision files, which are not in the repository.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..");

/** Tracked and new (not ignored) files, as text; binary files (a NUL byte) are skipped. */
const textFiles: ReadonlyMap<string, string> = new Map(
  execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter((file) => file !== "" && existsSync(path.join(root, file)) && statSync(path.join(root, file)).isFile())
    .map((file) => [file, readFileSync(path.join(root, file), "utf8")] as const)
    .filter(([, text]) => !text.includes("\0")),
);

/** GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen. */
const githubAnchor = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");

/** The anchors of a Markdown file's headings (outside code fences); a repeated heading gets `-1`, `-2`... */
const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = githubAnchor(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
};

/** Why a reference to `target` (a repository path) with an optional anchor does not resolve, or undefined. */
const brokenBecause = (target: string, anchor: string | undefined): string | undefined => {
  const full = path.join(root, target);
  if (!existsSync(full)) return "no such file";
  if (anchor === undefined || !target.endsWith(".md")) return undefined;
  return anchorsOf(readFileSync(full, "utf8")).has(anchor) ? undefined : `no heading with the anchor #${anchor}`;
};

describe("docs that the repository points at", () => {
  it("gives anchorsOf GitHub's rule: lower case, spaces to hyphens, punctuation dropped, repeats numbered", () => {
    expect(githubAnchor("Dispatch and the worker")).toBe("dispatch-and-the-worker");
    expect(githubAnchor("A stage stuck `pending`")).toBe("a-stage-stuck-pending");
    expect(githubAnchor("What's new? (v2, 2026)")).toBe("whats-new-v2-2026");
    expect([...anchorsOf("# Title\n## Notes\n```\n# not a heading\n```\n## Notes\n")]).toEqual(["title", "notes", "notes-1"]);
  });

  it("every docs/<file>.md#<anchor> named in a file of the repository names a file and a heading that exist", () => {
    const broken: string[] = [];
    for (const [file, text] of textFiles) {
      for (const match of text.matchAll(/(?<![\w./-])(docs\/[\w./-]*?\.md)(?:#([\w-]+))?/g)) {
        const why = brokenBecause(match[1]!, match[2]);
        if (why) broken.push(`${file}: ${match[0]}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every relative link in the repository's Markdown names a file and a heading that exist", () => {
    const broken: string[] = [];
    for (const [file, text] of textFiles) {
      if (!file.endsWith(".md")) continue;
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = match[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
        const [target, anchor] = link.split("#") as [string, string | undefined];
        const resolved = target === "" ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
        const why = brokenBecause(resolved, anchor);
        if (why) broken.push(`${file}: (${link}): ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every `npm run <script>` named in a file of the repository is a script of its package", () => {
    const scriptsOf = (dir: string): Record<string, string> => JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8")).scripts ?? {};
    const missing: string[] = [];
    for (const [file, text] of textFiles) {
      if (file.endsWith("package-lock.json")) continue;
      // A package of its own (client/) has its own scripts, as has one named by `--prefix`; the rest are the root's.
      const own = file.split("/")[0]!;
      const scripts = { ...scriptsOf("."), ...(existsSync(path.join(root, own, "package.json")) ? scriptsOf(own) : {}) };
      for (const match of text.matchAll(/\bnpm run (?:-s )?([\w:-]+)(?: --prefix ([\w./-]+))?/g)) {
        if (!(match[1]! in (match[2] ? scriptsOf(match[2]) : scripts))) missing.push(`${file}: ${match[0]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("docs/decisions.md keeps every section anchor that code and docs point at", () => {
    const anchors = anchorsOf(readFileSync(path.join(root, "docs/decisions.md"), "utf8"));
    const sections = [
      "running", "envelope-and-errors", "posts", "processing", "providers", "dispatch-and-the-worker", "webhooks",
      "playback-and-upload", "rate-limits", "idempotency", "tenancy-and-custody", "health-and-reference",
      "rendition-service", "aws-deployment", "loudness", "transcripts", "client-and-example-app",
    ];
    expect(sections.filter((section) => !anchors.has(section))).toEqual([]);
  });

  it("no file names the team's decision or architecture notes, which are not in the repository", () => {
    const outside = [["CONTRACT", "md"].join("."), ["ARCHITECTURE", "md"].join(".")];
    const naming = [...textFiles].filter(([, text]) => outside.some((name) => text.includes(name))).map(([file]) => file);
    expect(naming).toEqual([]);
  });

  it("no file points at the owner's interface or the team's notes by section (spec, interface or contract and a section sign, the interface file): references point into docs/", () => {
    const outside = new RegExp(`\\bspec (section|\u00a7) ?\\d|\\binterface \u00a7|\\bCONTRACT \u00a7|${["interface", "md"].join("\\.")}`, "i");
    const pointing = [...textFiles].filter(([, text]) => outside.test(text)).map(([file]) => file);
    expect(pointing).toEqual([]);
  });
});
