/** Runs ffmpeg once: arguments in, optional bytes on stdin, stdout collected, stderr kept for the log (never the answer). */
import { spawn } from "node:child_process";
import type { Readable } from "node:stream";

/** ffmpeg exited non-zero or could not start; `stderr` is for the log only. */
export class FfmpegError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = "FfmpegError";
  }
}

export interface FfmpegRun {
  /** Fed to ffmpeg's stdin (`-i pipe:0`). */
  stdin?: Readable;
  /** Collect stdout (`pipe:1` outputs); otherwise it is discarded. */
  collectStdout?: boolean;
  signal?: AbortSignal;
}

// Enough of stderr to explain a failure; ffmpeg can print a line per frame on some errors.
const stderrLimit = 16_384;

export function runFfmpeg(ffmpeg: string, args: string[], options: FfmpegRun = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const quiet = ["-hide_banner", ...(options.stdin ? [] : ["-nostdin"]), "-loglevel", "error"];
    const child = spawn(ffmpeg, [...quiet, ...args], {
      stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe"],
      signal: options.signal,
    });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      if (options.collectStdout) out.push(chunk);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      if (stderr.length < stderrLimit) stderr += chunk.toString("utf8").slice(0, stderrLimit - stderr.length);
    });
    if (options.stdin && child.stdin) {
      // ffmpeg may stop reading early (an error, or it has what it needs): that is not our failure to report.
      child.stdin.on("error", () => undefined);
      options.stdin.on("error", (error) => child.kill("SIGKILL") && reject(error));
      options.stdin.pipe(child.stdin);
    }
    child.on("error", (error) => reject(new FfmpegError(`ffmpeg could not run: ${error.message}`, stderr)));
    child.on("close", (code, signal) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new FfmpegError(`ffmpeg exited with ${code ?? signal}`, stderr.trim()));
    });
  });
}
