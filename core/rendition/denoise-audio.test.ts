/**
 * denoise-audio.ts against real ffmpeg: the variant's samples stay where they were, each channel in its own, and its
 * answer and cached PCM describe the stored file.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { blobKey } from "../blobs/blob-key";
import { rawCid } from "../blobs/raw-cid";
import type { AcceptedMimeType } from "../records/accepted-types";
import { channelLayout, decodeSamples, ffmpeg, makeClip } from "../../test/support/rendition-fixtures";
import { renditionWorkspace, runOnStored } from "../../test/support/rendition-workspace";
import { denoiseAudio } from "./denoise-audio";
import { analysisRate } from "./pcm";

const run = promisify(execFile);
const appId = "demo";
const workspace = renditionWorkspace("denoise-audio-test-");

/** Stores the upload, denoises it, and answers the answer and the stored variant's bytes. */
async function denoised(bytes: Buffer, mimeType: AcceptedMimeType) {
  return runOnStored(workspace, denoiseAudio, bytes, mimeType);
}

/** RMS level in dBFS of each channel of the bytes, decoded as they are. */
async function channelLevels(bytes: Buffer, channels: number): Promise<number[]> {
  const file = join(workspace.dir, `levels-${rawCid(bytes)}`);
  await writeFile(file, bytes);
  const { stdout } = await run(ffmpeg, ["-v", "error", "-i", file, "-f", "f32le", "pipe:1"], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 });
  const samples = new Float32Array(new Uint8Array(stdout).slice().buffer);
  const sums = new Array<number>(channels).fill(0);
  samples.forEach((s, i) => (sums[i % channels]! += s * s));
  return sums.map((sum) => 10 * Math.log10(sum / (samples.length / channels) + 1e-15));
}

const onset = (samples: Float32Array) => samples.findIndex((s) => Math.abs(s) > 0.05);

describe("denoise keeps the clip's timing", () => {
  it("adds no burst at the start and no delay: the tone starts where it did, and the length is kept", async () => {
    // Ends on the tone, where the priming stopped: what a primed state let out at the start.
    const upload = await makeClip("audio/wav", { lead: 0.3, tone: 0.5, tail: 0 });
    const { answer, stored } = await denoised(upload, "audio/wav");
    const [before, after] = [await decodeSamples(upload), await decodeSamples(stored)];
    expect(after.length).toBe(before.length);
    expect(Math.abs(onset(after) - onset(before))).toBeLessThanOrEqual(48);
    expect(Math.max(...after.subarray(0, 480).map(Math.abs))).toBeLessThan(10 ** (-80 / 20));
    expect(answer.durationMs).toBe(800);
  });
});

describe("denoise keeps every channel in its own", () => {
  // A tone in the first and third channels, silence in the others: a remix would move sound into a silent one.
  const layouts: Record<number, string> = { 3: "3.0", 4: "quad" };
  const upload = async (channels: number, codec: string, format: string) => {
    const file = join(workspace.dir, `upload-${channels}-${codec}.${format}`);
    const graph = `sine=f=440:r=48000:d=0.6,volume=4,pan=${layouts[channels]}|c0=c0|c2=c0`;
    await run(ffmpeg, ["-v", "error", "-filter_complex", graph, "-c:a", codec, "-f", format, file]);
    return readFile(file);
  };

  it.each<[number, string, string, AcceptedMimeType]>([
    [3, "libvorbis", "ogg", "audio/ogg"],
    [4, "flac", "ogg", "audio/ogg"],
    [4, "libvorbis", "webm", "audio/webm"],
  ])("denoises a %i-channel %s upload in %s to Opus in the Vorbis layout of its count, no channel remixed", async (channels, codec, format, mimeType) => {
    const { stored } = await denoised(await upload(channels, codec, format), mimeType);
    expect(await channelLayout(stored)).toBe(layouts[channels]);
    const levels = await channelLevels(stored, channels);
    expect(levels[0]).toBeGreaterThan(-12);
    expect(levels[2]).toBeGreaterThan(-12);
    // Opus codes the pairs of a quad jointly at a low rate, and leaks a little (-41 dBFS measured); a remix moves the tone (-9).
    for (const silent of channels === 3 ? [1] : [1, 3]) expect(levels[silent]).toBeLessThan(-30);
  });
});

describe("denoise describes what it stored", () => {
  // At 44.1 kHz, the upload's length at RNNoise's 48 kHz is no whole number of AAC frames: the encoder pads the last.
  it.each<[AcceptedMimeType, number]>([
    ["audio/m4a", 44100],
    ["audio/mp4", 44100],
    ["audio/ogg", 48000],
    ["audio/mpeg", 44100],
  ])("answers the decoded length of the stored %s variant (%i Hz upload), and caches that decode's PCM", async (mimeType, sampleRate) => {
    const { answer, stored } = await denoised(await makeClip(mimeType, { lead: 0.2, tone: 0.5, tail: 0.2, sampleRate }), mimeType);
    const decoded = (await decodeSamples(stored, analysisRate)).length;
    expect(Math.abs(answer.durationMs - (decoded * 1000) / analysisRate)).toBeLessThanOrEqual(1);
    expect(workspace.context.pcm.get(blobKey(appId, answer.cid))!.samples.length).toBe(decoded);
  });
});
