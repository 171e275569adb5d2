/**
 * encode-measured.ts: the measurement taken while encoding is the one a probe of the stored file gives afterwards, in
 * every family, so the figures normalize reports and judges by are those of the bytes it stores.
 */
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { acceptedMimeTypes, type AcceptedMimeType } from "../records/accepted-types";
import { ffmpeg, makeClip } from "../../test/support/rendition-fixtures";
import { coresFreeForBoth, encodeMeasured, measuredWhileEncoding } from "./encode-measured";
import { familyEncodings } from "./family-encoding";
import { typedInput } from "./ffmpeg-input";
import { createLoudnessCache } from "./loudness-cache";
import { createRecentEntries } from "./recent-entries";
import { createPcmCache } from "./pcm-cache";
import { probeLoudness } from "./probe-loudness";
import type { RenditionContext } from "./rendition-context";
import { type FfmpegTiming, runFfmpeg } from "./run-ffmpeg";

let dir: string;
let context: RenditionContext;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "encode-measured-test-"));
  context = { store: createFsBlobStore(join(dir, "blobs")), ffmpeg, pcm: createPcmCache(), loudness: createLoudnessCache(), renditions: createRecentEntries() };
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a measurement taken while encoding", () => {
  it.each(acceptedMimeTypes as AcceptedMimeType[])("equals the probe of the stored %s file: loudness, true peak, range, channels and decoded length", async (mimeType) => {
    const source = join(dir, `source-${mimeType.replace("/", "-")}`);
    await writeFile(source, await makeClip(mimeType, { lead: 1, tone: 4, tail: 1, noise: true, seed: 3 }));
    const file = join(dir, `out-${mimeType.replace("/", "-")}.${familyEncodings[mimeType].ext}`);
    const timings: FfmpegTiming[] = [];
    const measured = await encodeMeasured({ ...context, timings }, { input: [...typedInput(source, mimeType), "-af", "volume=4dB"], mimeType, file, step: "gain-encode" });
    const stored = await probeLoudness(context, file, mimeType);
    expect(measured.loudness).toEqual(stored.loudness);
    expect(measured.channels).toBe(stored.channels);
    expect(measured.sampleRate).toBe(stored.sampleRate);
    expect(measured.pcm.samples.length).toBe(stored.pcm.samples.length);
    // The pair runs at once where the family allows it, and is then one entry of the request's timings.
    const steps = measuredWhileEncoding(mimeType) ? ["gain-encode+measure"] : ["gain-encode", "gain-encode:measure"];
    expect(timings.map((t) => t.step)).toEqual(steps);
  });

  it("measures after the encode, still as stored, when the output's path has characters the tee muxer would misread", async () => {
    const source = join(dir, "odd-source.webm");
    await writeFile(source, await makeClip("audio/webm", { noise: true, seed: 5 }));
    const file = join(dir, "odd [name] | here.webm");
    const timings: FfmpegTiming[] = [];
    const mp3 = join(dir, "odd-rendition.mp3");
    const alsoOutputs = ["-map", "0:a:0", "-c:a", "libmp3lame", "-f", "mp3", mp3];
    const measured = await encodeMeasured({ ...context, timings }, { input: typedInput(source, "audio/webm"), mimeType: "audio/webm", file, step: "trim-encode", alsoOutputs });
    expect(measured.loudness).toEqual((await probeLoudness(context, file, "audio/webm")).loudness);
    expect((await stat(mp3)).size).toBeGreaterThan(0);
    expect(timings.map((t) => t.step)).toEqual(["trim-encode", "trim-encode:measure"]);
  });

  it("measures after the encode, one run at a time, while this process's other ffmpeg runs fill the cores", async () => {
    const source = join(dir, "busy-source.webm");
    await writeFile(source, await makeClip("audio/webm", { noise: true, seed: 6 }));
    // Runs that wait on their stdin until let go: other posts' encodes, as far as the cores are concerned.
    const inputs = Array.from({ length: availableParallelism() - 1 }, () => new PassThrough());
    const others = inputs.map((stdin) => runFfmpeg(ffmpeg, ["-f", "s16le", "-ar", "8000", "-ac", "1", "-i", "pipe:0", "-f", "null", "-"], { stdin }));
    try {
      expect(coresFreeForBoth()).toBe(false);
      const timings: FfmpegTiming[] = [];
      const file = join(dir, "busy.webm");
      const measured = await encodeMeasured({ ...context, timings }, { input: typedInput(source, "audio/webm"), mimeType: "audio/webm", file, step: "trim-encode" });
      expect(timings.map((t) => t.step)).toEqual(["trim-encode", "trim-encode:measure"]);
      expect(measured.loudness).toEqual((await probeLoudness(context, file, "audio/webm")).loudness);
    } finally {
      inputs.forEach((stdin) => stdin.end());
      await Promise.all(others);
    }
    expect(coresFreeForBoth()).toBe(true);
  });

  it("fails, and leaves no run behind, when the encode fails", async () => {
    const source = join(dir, "not-audio");
    await writeFile(source, "this is not audio");
    const run = encodeMeasured(context, { input: typedInput(source, "audio/webm"), mimeType: "audio/webm", file: join(dir, "never.webm"), step: "x" });
    await expect(run).rejects.toThrow();
  });

  it("fails, rather than leaving the encoder blocked on its pipe, when the measuring run fails", async () => {
    const source = join(dir, "long.webm");
    await writeFile(source, await makeClip("audio/webm", { lead: 1, tone: 30, tail: 1 }));
    const alsoOutputs = ["-c:a", "no-such-encoder", join(dir, "never.mp3")];
    const run = encodeMeasured(context, { input: typedInput(source, "audio/webm"), mimeType: "audio/webm", file: join(dir, "blocked.webm"), step: "x", alsoOutputs });
    await expect(run).rejects.toThrow();
  }, 20_000);
});
