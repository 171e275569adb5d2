/**
 * Which ffmpeg binary to run: `FFMPEG_PATH` when set, else the static build shipped by `@ffmpeg-installer/<platform>-<arch>`
 * (on Lambda that is `@ffmpeg-installer/linux-arm64`, installed beside the bundle), else `@ffmpeg-installer/ffmpeg`'s pick.
 */
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** `configured` is FFMPEG_PATH as the configuration read it. */
export function resolveFfmpegPath(configured?: string, from: string = import.meta.url): string {
  if (configured) return configured;
  const require = createRequire(from);
  const binary = platform() === "win32" ? "ffmpeg.exe" : "ffmpeg";
  // The platform package directly: a bundler that drops `@ffmpeg-installer/ffmpeg`'s lookup still finds it.
  try {
    const candidate = join(dirname(require.resolve(`@ffmpeg-installer/${platform()}-${arch()}/package.json`)), binary);
    if (executable(candidate)) return candidate;
  } catch {
    // not installed for this platform: fall through
  }
  try {
    return (require("@ffmpeg-installer/ffmpeg") as { path: string }).path;
  } catch {
    throw new Error(`no ffmpeg found: install @ffmpeg-installer/${platform()}-${arch()} or set FFMPEG_PATH`);
  }
}
