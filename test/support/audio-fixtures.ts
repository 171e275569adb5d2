/** Real audio for tests, generated with ffmpeg (FFMPEG_PATH, else @ffmpeg-installer/ffmpeg) and cached in the temp dir. */
import { execFile, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import installer from "@ffmpeg-installer/ffmpeg";
import type { AcceptedMimeType } from "../../core/records/accepted-types";

const run = promisify(execFile);

export const ffmpegPath = process.env.FFMPEG_PATH || installer.path;

export interface AudioFixture {
  mimeType: string;
  path: string;
  bytes: Buffer;
}

// One distinct tone per type so that no two fixtures share a CID.
const recipes: Record<AcceptedMimeType, { frequency: number; args: string[]; ext: string }> = {
  "audio/wav": { frequency: 440, args: ["-c:a", "pcm_s16le", "-f", "wav"], ext: "wav" },
  "audio/mpeg": { frequency: 494, args: ["-c:a", "libmp3lame", "-b:a", "64k", "-f", "mp3"], ext: "mp3" },
  "audio/ogg": { frequency: 523, args: ["-c:a", "libvorbis", "-f", "ogg"], ext: "ogg" },
  "audio/webm": { frequency: 587, args: ["-c:a", "libopus", "-f", "webm"], ext: "webm" },
  // The ipod muxer writes the `M4A ` brand; the mp4 muxer writes `isom`: both are the MP4 family.
  "audio/m4a": { frequency: 659, args: ["-c:a", "aac", "-f", "ipod"], ext: "m4a" },
  "audio/x-m4a": { frequency: 698, args: ["-c:a", "aac", "-f", "ipod"], ext: "m4a" },
  "audio/mp4": { frequency: 784, args: ["-c:a", "aac", "-f", "mp4"], ext: "mp4" },
};

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);
// Shared by every test process and kept between runs; a file's name changes whenever its ffmpeg arguments do.
const fixtureDir = join(tmpdir(), `svc-audio-fixtures-${digest(ffmpegPath)}`);
const cache = new Map<string, Promise<AudioFixture>>();

async function generate(name: string, mimeType: string, args: string[]): Promise<AudioFixture> {
  const path = join(fixtureDir, `${digest(JSON.stringify(args))}-${name}`);
  try {
    return { mimeType, path, bytes: await readFile(path) };
  } catch {
    // Not generated yet: write beside it, then rename, so a parallel worker never reads half a file.
    await mkdir(fixtureDir, { recursive: true });
    const temp = join(fixtureDir, `.${randomUUID()}-${name}`);
    try {
      await run(ffmpegPath, ["-hide_banner", "-loglevel", "error", "-y", ...args, temp]);
      await rename(temp, path);
    } finally {
      await rm(temp, { force: true });
    }
    return { mimeType, path, bytes: await readFile(path) };
  }
}

const cached = (name: string, make: () => Promise<AudioFixture>) => {
  let fixture = cache.get(name);
  if (!fixture) cache.set(name, (fixture = make()));
  return fixture;
};

/** One second of a sine tone, mono 48 kHz, encoded as the given accepted type. */
export function audioFixture(mimeType: AcceptedMimeType): Promise<AudioFixture> {
  const recipe = recipes[mimeType];
  return cached(mimeType, () =>
    generate(`${mimeType.replace("/", "-")}.${recipe.ext}`, mimeType, [
      "-f",
      "lavfi",
      "-i",
      `sine=frequency=${recipe.frequency}:duration=1`,
      "-ac",
      "1",
      "-ar",
      "48000",
      ...recipe.args,
    ]),
  );
}

/** One second of video with a sound track: the right container, but not audio. */
export function videoFixture(container: "webm" | "mp4"): Promise<AudioFixture> {
  const codecs = container === "webm" ? ["-c:v", "libvpx", "-c:a", "libopus"] : ["-c:v", "libx264", "-c:a", "aac"];
  return cached(`video.${container}`, () =>
    generate(`video.${container}`, `video/${container}`, [
      "-f",
      "lavfi",
      "-i",
      "testsrc=duration=1:size=64x64:rate=10",
      "-f",
      "lavfi",
      "-i",
      "sine=duration=1",
      ...codecs,
      "-shortest",
      "-f",
      container,
    ]),
  );
}

/** The 44-byte header of a PCM WAV (mono, 16-bit, 48 kHz) whose file is `totalBytes` long in all. */
export function pcmWavHeader(totalBytes: number): Buffer {
  const dataBytes = totalBytes - 44;
  if (dataBytes < 0 || dataBytes % 2 !== 0) throw new Error("a 16-bit PCM WAV needs 44 + an even number of bytes");
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(totalBytes - 8, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(48_000, 24);
  header.writeUInt32LE(96_000, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** A valid PCM WAV of exactly `totalBytes` bytes: silence after the header. */
export function pcmWav(totalBytes: number): Buffer {
  const wav = Buffer.alloc(totalBytes);
  pcmWavHeader(totalBytes).copy(wav);
  return wav;
}

/**
 * `seconds` of pink noise (so VBR encoders vary their frame sizes), stereo 44.1 kHz, encoded with the given ffmpeg
 * output arguments; cached like the other fixtures.
 */
export function encodedNoise(name: string, mimeType: string, seconds: number, args: string[]): Promise<AudioFixture> {
  return cached(`noise-${name}`, () =>
    generate(`noise-${name}`, mimeType, ["-f", "lavfi", "-i", `anoisesrc=d=${seconds}:c=pink:a=0.3`, "-ac", "2", "-ar", "44100", ...args]),
  );
}

/** How long ffmpeg decodes the bytes to, in ms (its `time=` progress after decoding all of them); null when it cannot. */
export async function decodedMs(bytes: Buffer): Promise<number | null> {
  await mkdir(fixtureDir, { recursive: true });
  const path = join(fixtureDir, `.decode-${randomUUID()}`);
  try {
    await writeFile(path, bytes);
    const { stderr } = await run(ffmpegPath, ["-hide_banner", "-nostdin", "-i", path, "-f", "null", "-"]).catch((error: { stderr?: string }) => ({
      stderr: error.stderr ?? "",
    }));
    const times = [...stderr.matchAll(/time=(\d+):(\d+):(\d+\.\d+)/g)];
    const last = times.at(-1);
    if (!last) return null;
    return Math.round((Number(last[1]) * 3600 + Number(last[2]) * 60 + Number(last[3])) * 1000);
  } finally {
    await rm(path, { force: true });
  }
}

/** How long the file at `path` plays by ffmpeg's decoder, in ms: the samples it decodes (mono, 48 kHz), counted. */
export async function decodedSampleMs(path: string): Promise<number> {
  const decoder = spawn(ffmpegPath, ["-hide_banner", "-nostdin", "-loglevel", "error", "-i", path, "-ac", "1", "-ar", "48000", "-f", "s16le", "-"]);
  let bytes = 0;
  let stderr = "";
  decoder.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length));
  decoder.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => decoder.on("error", reject).on("close", resolve));
  if (code !== 0) throw new Error(`ffmpeg could not decode ${path}: ${stderr.trim()}`);
  return Math.round(bytes / 2 / 48);
}
