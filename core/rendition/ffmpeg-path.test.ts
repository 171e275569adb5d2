import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { arch, platform, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { resolveFfmpegPath } from "./ffmpeg-path";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("ffmpeg path", () => {
  it("FFMPEG_PATH chooses the binary", () => {
    expect(resolveFfmpegPath("/usr/bin/ffmpeg")).toBe("/usr/bin/ffmpeg");
  });

  it("finds @ffmpeg-installer/<platform>-<arch> installed beside a bundle, as on Lambda (linux-arm64)", async () => {
    const root = await mkdtemp(join(tmpdir(), "ffmpeg-path-"));
    dirs.push(root);
    const pkg = join(root, "node_modules", "@ffmpeg-installer", `${platform()}-${arch()}`);
    await mkdir(pkg, { recursive: true });
    await writeFile(join(pkg, "package.json"), JSON.stringify({ name: `@ffmpeg-installer/${platform()}-${arch()}`, version: "4.1.4" }));
    await writeFile(join(pkg, "ffmpeg"), "#!/bin/sh\n");
    await chmod(join(pkg, "ffmpeg"), 0o755);
    const bundle = pathToFileURL(join(root, "index.mjs")).href;
    expect(resolveFfmpegPath(undefined, bundle)).toBe(join(pkg, "ffmpeg"));
  });

  it("defaults to the binary of @ffmpeg-installer/ffmpeg", () => {
    expect(resolveFfmpegPath()).toMatch(/@ffmpeg-installer\/[a-z0-9]+-[a-z0-9]+\/ffmpeg$/);
  });
});
