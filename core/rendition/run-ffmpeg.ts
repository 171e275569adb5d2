/**
 * Runs ffmpeg once: arguments in, optional bytes on stdin, stdout collected, stderr kept for the log (never the
 * answer) or, at `info` level, read for a filter's report.
 */
import { spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { unnamedInput } from "./ffmpeg-input";

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
  /** Collected stdout past this many bytes stops the run, which fails (default 1 GiB: one Buffer holds at most 4). */
  maxStdoutBytes?: number;
  /** Stream stdout here instead (another ffmpeg's stdin), with backpressure. */
  stdoutTo?: Writable;
  /** Each piece ffmpeg writes to `pipe:3` (a second output read as it comes, never collected). */
  onPipe3?: (chunk: Buffer) => void;
  signal?: AbortSignal;
  /** `info` lets filters print their summaries (ebur128); the default `error` keeps stderr to what went wrong. */
  logLevel?: "error" | "info";
  /** Where the run's wall time is recorded, under `step`: the request's log line says where its time went. */
  timings?: FfmpegTiming[];
  step?: string;
}

/** One ffmpeg run of a request: what it did and how long it took (wall clock, ms). */
export interface FfmpegTiming {
  step: string;
  ms: number;
}

// The last 64 KiB of stderr: enough to explain a failure, and where filters print their summaries at the end.
// ffmpeg can print a line per frame on some errors.
const stderrLimit = 65_536;

const defaultMaxStdoutBytes = 2 ** 30;

let running = 0;

/** ffmpeg processes of this process running now: whether a core is free for a run beside another. */
export const ffmpegRunsInFlight = (): number => running;

export async function runFfmpeg(ffmpeg: string, args: string[], options: FfmpegRun = {}): Promise<Buffer> {
  return (await runFfmpegWithLog(ffmpeg, args, options)).stdout;
}

/** runFfmpeg, answering stderr too (its last 64 KiB) for a filter's report. */
export function runFfmpegWithLog(ffmpeg: string, args: string[], options: FfmpegRun = {}): Promise<{ stdout: Buffer; stderr: string }> {
  const unnamed = unnamedInput(args);
  if (unnamed !== undefined) return Promise.reject(new Error(`ffmpeg input ${unnamed} names no demuxer (ffmpeg-input.ts)`));
  const started = performance.now();
  const record = () => options.timings?.push({ step: options.step ?? "ffmpeg", ms: Math.round(performance.now() - started) });
  return new Promise((resolve, reject) => {
    const quiet = ["-hide_banner", "-nostats", ...(options.stdin ? [] : ["-nostdin"]), "-loglevel", options.logLevel ?? "error"];
    const child = spawn(ffmpeg, [...quiet, ...args], {
      stdio: [options.stdin ? "pipe" : "ignore", "pipe", "pipe", ...(options.onPipe3 ? (["pipe"] as const) : [])],
      signal: options.signal,
    });
    const out: Buffer[] = [];
    let collected = 0;
    let overflow: FfmpegError | undefined;
    let stderr = "";
    if (options.stdoutTo) child.stdout!.pipe(options.stdoutTo);
    else
      child.stdout!.on("data", (chunk: Buffer) => {
        if (!options.collectStdout || overflow) return;
        collected += chunk.length;
        const limit = options.maxStdoutBytes ?? defaultMaxStdoutBytes;
        if (collected > limit) {
          overflow = new FfmpegError(`ffmpeg wrote more than ${limit} bytes to collect`, "");
          out.length = 0;
          child.kill("SIGKILL");
        } else out.push(chunk);
      });
    let pipe3Error: unknown;
    if (options.onPipe3) {
      const onPipe3 = options.onPipe3;
      (child.stdio[3] as Readable).on("data", (chunk: Buffer) => {
        if (pipe3Error) return;
        try {
          onPipe3(chunk);
        } catch (error) {
          pipe3Error = error;
          child.kill("SIGKILL");
        }
      });
    }
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-stderrLimit);
    });
    if (options.stdin && child.stdin) {
      // ffmpeg may stop reading early (an error, or it has what it needs): that is not our failure to report.
      child.stdin.on("error", () => undefined);
      options.stdin.on("error", (error) => child.kill("SIGKILL") && reject(error));
      options.stdin.pipe(child.stdin);
    }
    running++;
    let counted = true;
    const done = () => {
      if (counted) running--;
      counted = false;
    };
    child.on("error", (error) => {
      done();
      reject(new FfmpegError(`ffmpeg could not run: ${error.message}`, stderr));
    });
    child.on("close", (code, signal) => {
      done();
      record();
      if (overflow) reject(overflow);
      else if (pipe3Error) reject(pipe3Error);
      else if (code === 0) resolve({ stdout: Buffer.concat(out), stderr });
      else reject(new FfmpegError(`ffmpeg exited with ${code ?? signal}`, stderr.trim()));
    });
  });
}
