/**
 * Clips for the rendition tests, generated with the ffmpeg binary from lavfi sources (`sine`, `anullsrc`,
 * `anoisesrc`): a 2 s tone between 1 s of silence at each end, optionally under white noise at -40 dBFS RMS.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AcceptedMimeType } from "../../core/records/accepted-types";
import { familyEncodings } from "../../core/rendition/family-encoding";
import { resolveFfmpegPath } from "../../core/rendition/ffmpeg-path";

const run = promisify(execFile);
export const ffmpeg = resolveFfmpegPath();

/** Uniform noise of amplitude a has RMS a/sqrt(3): this is -40 dBFS RMS. */
const noiseAmplitude = (0.01 * Math.sqrt(3)).toFixed(5);

export interface ClipRecipe {
  /** Seconds of silence before the tone. */
  lead?: number;
  /** Seconds of tone (0: a clip of silence only). */
  tone?: number;
  /** The tone's frequency in Hz (440 unless said). */
  frequency?: number;
  /** Seconds of silence after the tone. */
  tail?: number;
  /** White noise at -40 dBFS RMS under everything. */
  noise?: boolean;
  sampleRate?: number;
  /** The noise's seed: clips that differ only in it are different bytes (distinct CIDs). */
  seed?: number;
  /** Channels of the encoded clip, each carrying the same signal (1 unless said). */
  channels?: number;
}

export function clipFilter({ lead = 1, tone = 2, frequency = 440, tail = 1, noise = false, sampleRate = 48000, seed }: ClipRecipe = {}): string {
  const r = sampleRate;
  const parts: string[] = [];
  const labels: string[] = [];
  const add = (filter: string) => {
    const label = `p${parts.length}`;
    parts.push(`${filter}[${label}]`);
    labels.push(`[${label}]`);
  };
  if (lead > 0) add(`anullsrc=r=${r}:cl=mono,atrim=duration=${lead}`);
  // lavfi sine plays at 1/8 of full scale: the tone peaks at half scale.
  if (tone > 0) add(`sine=f=${frequency}:r=${r}:d=${tone},volume=4`);
  if (tail > 0) add(`anullsrc=r=${r}:cl=mono,atrim=duration=${tail}`);
  const total = lead + tone + tail;
  let graph = `${parts.join(";")};${labels.join("")}concat=n=${labels.length}:v=0:a=1`;
  // amix halves each of its two inputs; the volume filter puts them back at their own levels.
  if (noise) graph += `[s];anoisesrc=r=${r}:a=${noiseAmplitude}:d=${total}${seed === undefined ? "" : `:seed=${seed}`}[n];[s][n]amix=inputs=2:duration=first,volume=2`;
  return graph;
}

/** Encodes a recipe in a family's own encoding and returns the bytes. */
export async function makeClip(mimeType: AcceptedMimeType, recipe: ClipRecipe = {}): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "rendition-fixture-"));
  try {
    const encoding = familyEncodings[mimeType];
    const out = join(dir, `clip.${encoding.ext}`);
    await run(ffmpeg, ["-hide_banner", "-loglevel", "error", "-y", "-filter_complex", clipFilter(recipe), "-ac", String(recipe.channels ?? 1), ...encoding.args, out]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Decodes bytes to mono 48 kHz float samples with the same binary (the check a player makes), failing on any decode error. */
export async function decodeSamples(bytes: Buffer, sampleRate = 48000): Promise<Float32Array> {
  const dir = await mkdtemp(join(tmpdir(), "rendition-decode-"));
  try {
    const input = join(dir, "input");
    await import("node:fs/promises").then((fs) => fs.writeFile(input, bytes));
    const { stdout } = await run(
      ffmpeg,
      ["-hide_banner", "-v", "error", "-xerror", "-i", input, "-ac", "1", "-ar", String(sampleRate), "-f", "f32le", "pipe:1"],
      { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
    );
    const copy = new Uint8Array(stdout.length - (stdout.length % 4));
    copy.set(stdout.subarray(0, copy.length));
    return new Float32Array(copy.buffer);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The MD5 of each audio packet of the bytes, as stored (not decoded): which packets one file shares with another. */
export async function packetHashes(bytes: Buffer): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "rendition-packets-"));
  try {
    const input = join(dir, "input");
    await import("node:fs/promises").then((fs) => fs.writeFile(input, bytes));
    const { stdout } = await run(ffmpeg, ["-hide_banner", "-v", "error", "-i", input, "-map", "0:a:0", "-c", "copy", "-f", "framemd5", "pipe:1"], { maxBuffer: 64 * 1024 * 1024 });
    return String(stdout).split("\n").filter((line) => line && !line.startsWith("#")).map((line) => line.split(",")[5]!.trim()); // stream, dts, pts, duration, size, hash[, side data]
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** RMS level in dBFS of samples[from, to) seconds. */
export function levelDb(samples: Float32Array, fromSeconds: number, toSeconds: number, sampleRate = 48000): number {
  const start = Math.floor(fromSeconds * sampleRate);
  const end = Math.min(samples.length, Math.floor(toSeconds * sampleRate));
  let sum = 0;
  for (let i = start; i < end; i++) sum += samples[i]! * samples[i]!;
  const rms = Math.sqrt(sum / Math.max(1, end - start));
  return rms > 0 ? 20 * Math.log10(rms) : -150;
}

/** The channel layout ffmpeg reports for the bytes' first audio stream ("mono", "stereo", ...). */
export async function channelLayout(bytes: Buffer): Promise<string | undefined> {
  const dir = await mkdtemp(join(tmpdir(), "rendition-layout-"));
  try {
    const input = join(dir, "input");
    await import("node:fs/promises").then((fs) => fs.writeFile(input, bytes));
    const { stderr } = await run(ffmpeg, ["-hide_banner", "-i", input]).catch((error: { stderr: string }) => error);
    return /Audio: [^,]+, \d+ Hz, ([^,]+)/.exec(String(stderr))?.[1];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
