import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

/**
 * The arm64 ffmpeg binary for the rendition Lambda, laid out as a Lambda layer (`bin/ffmpeg` -> `/opt/bin/ffmpeg`).
 * npm installs only the build machine's platform package of `@ffmpeg-installer/ffmpeg`, so the arm64 one is fetched
 * with `npm pack` at the version `@ffmpeg-installer/ffmpeg` pins (no install scripts run) and cached under `.sst/`.
 */
export const ffmpegArm64Package = "@ffmpeg-installer/linux-arm64";
export const ffmpegLayerPath = "/opt/bin/ffmpeg";

export const pinnedFfmpegArm64Version = (): string => {
  const require = createRequire(import.meta.url);
  const manifest = JSON.parse(readFileSync(require.resolve("@ffmpeg-installer/ffmpeg/package.json"), "utf8")) as {
    optionalDependencies: Record<string, string>;
  };
  const version = manifest.optionalDependencies[ffmpegArm64Package];
  if (!version) throw new Error(`@ffmpeg-installer/ffmpeg no longer lists ${ffmpegArm64Package}`);
  return version;
};

/** The layer directory, fetched once per version. */
export const ffmpegArm64LayerDir = (root: string): string => {
  const version = pinnedFfmpegArm64Version();
  const dir = path.join(root, ".sst", "ffmpeg-layer", version);
  const binary = path.join(dir, "bin", "ffmpeg");
  if (existsSync(binary)) return dir;
  mkdirSync(path.join(root, ".sst"), { recursive: true });
  const work = mkdtempSync(path.join(root, ".sst", "ffmpeg-pack-"));
  try {
    const tarball = execFileSync("npm", ["pack", "--silent", `${ffmpegArm64Package}@${version}`], { cwd: work, encoding: "utf8" }).trim();
    execFileSync("tar", ["-xzf", tarball, "package/ffmpeg"], { cwd: work });
    mkdirSync(path.join(dir, "bin"), { recursive: true });
    renameSync(path.join(work, "package", "ffmpeg"), binary);
    chmodSync(binary, 0o755);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
};
