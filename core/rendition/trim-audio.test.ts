/** trim-audio.ts against real ffmpeg: what it keeps of a clip with no pause, and its Opus encode of a WebM it cannot copy. */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { sniffAudioFamily } from "../audio/sniff-audio";
import type { AcceptedMimeType } from "../records/accepted-types";
import { channelLayout, ffmpeg } from "../../test/support/rendition-fixtures";
import { renditionWorkspace, runOnStored } from "../../test/support/rendition-workspace";
import { trimAudio } from "./trim-audio";

const run = promisify(execFile);
const workspace = renditionWorkspace("trim-audio-test-");

async function trimmed(bytes: Buffer, mimeType: AcceptedMimeType) {
  return runOnStored(workspace, trimAudio, bytes, mimeType);
}

describe("trim keeps all the sound", () => {
  it("answers a recording with no pause unchanged: its quieter end (-16 dBFS) is sound, not silence", async () => {
    const bytes = await readFile(join(import.meta.dirname, "../../test/fixtures/browser-recordings/chromium-1.5s.webm"));
    const { cid, answer } = await trimmed(bytes, "audio/webm");
    expect(answer).toMatchObject({ cid, size: bytes.length, durationMs: 1500 });
  });
});

describe("trim of a clip whose timestamps have a gap", () => {
  it.each([
    ["webm", "audio/webm", "libopus"],
    ["ogg", "audio/ogg", "libopus"],
    ["m4a", "audio/m4a", "aac"],
  ] as const)("answers a %s unchanged rather than cut in the wrong place: its decoded samples join across the gap, the cut goes by the timestamps", async (ext, mimeType, codec) => {
    // A tone from 1 to 3 s of a 4 s clip, its timestamps 2 s apart at 2 s: cut by the joined samples' bounds, half
    // the tone was lost.
    const file = join(workspace.dir, `gap.${ext}`);
    const graph = "aevalsrc=0.3*sin(2*PI*300*t)*between(t\\,1\\,3):s=48000:d=4,asetpts=PTS+gte(T\\,2)*2/TB";
    await run(ffmpeg, ["-v", "error", "-y", "-f", "lavfi", "-i", graph, "-c:a", codec, file]);
    const bytes = await readFile(file);
    const { cid, answer } = await trimmed(bytes, mimeType);
    expect(answer).toMatchObject({ cid, size: bytes.length });
  });
});

describe("trim's encode of a WebM it cannot copy", () => {
  it("encodes 4-channel PCM in WebM (MediaRecorder's codecs=pcm) to Opus in quad, each channel in its own", async () => {
    // ffmpeg's webm muxer refuses PCM: the Matroska file is labelled webm, as Chromium writes it. Its PCM has no
    // channel layout, so ffmpeg would guess 4.0, which libopus refuses and which a conversion to quad would remix.
    const file = join(workspace.dir, "pcm.mka");
    const silence = (label: string) => `anullsrc=r=48000:cl=mono,atrim=duration=0.5[${label}]`;
    const graph = `${silence("a")};sine=f=440:r=48000:d=0.5,volume=4[b];${silence("c")};[a][b][c]concat=n=3:v=0:a=1,pan=4.0|c0=c0|c2=c0`;
    await run(ffmpeg, ["-v", "error", "-filter_complex", graph, "-c:a", "pcm_f32le", "-f", "matroska", file]);
    const matroska = await readFile(file);
    const docType = matroska.indexOf(Buffer.from("\x42\x82\x88matroska", "latin1"));
    const webm = Buffer.concat([matroska.subarray(0, docType), Buffer.from("\x42\x82\x88webm\0\0\0\0", "latin1"), matroska.subarray(docType + 11)]);
    expect(await sniffAudioFamily(webm)).toBe("webm");

    const { answer, stored } = await trimmed(webm, "audio/webm");
    expect(Math.abs(answer.durationMs - 800)).toBeLessThanOrEqual(30);
    expect(await channelLayout(stored)).toBe("quad");
    await writeFile(join(workspace.dir, "trimmed.webm"), stored);
    const { stdout } = await run(ffmpeg, ["-v", "error", "-i", join(workspace.dir, "trimmed.webm"), "-f", "f32le", "pipe:1"], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 });
    const samples = new Float32Array(new Uint8Array(stdout).slice().buffer);
    const peaks = [0, 1, 2, 3].map((channel) => samples.reduce((peak, s, i) => (i % 4 === channel ? Math.max(peak, Math.abs(s)) : peak), 0));
    expect(peaks[0]).toBeGreaterThan(0.3);
    expect(peaks[2]).toBeGreaterThan(0.3);
    // Opus codes each pair jointly and leaks a little at 64 kbit/s; a remix would move the tone itself.
    expect(peaks[1]).toBeLessThan(0.05);
    expect(peaks[3]).toBeLessThan(0.05);
  });
});
