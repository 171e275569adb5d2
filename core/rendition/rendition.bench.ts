/**
 * Processing time of the rendition operations on a 60 s clip (FFMPEG_PATH chooses the ffmpeg; default the static
 * build of @ffmpeg-installer): trim, waveform, normalize, mp3 and RNNoise each from a cold cache, and trim + waveform
 * + mp3 of the trimmed clip together as a pass runs them (the waveform reuses the trim's decode), and normalize after
 * a trim that measured its output, with the mp3 rendition it writes. Targets on a 2-core
 * machine: the three together at most 1 s; normalize at most 500 ms of CPU (ffmpeg's included), printed per run
 * after the wall-clock table since the wall clock on a shared machine says little about CPU.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, bench, describe } from "vitest";
import type { AcceptedMimeType } from "../records/accepted-types";
import { rawCid } from "../blobs/raw-cid";
import { blobKey } from "../blobs/blob-key";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { cpuTimeMs } from "../../test/support/cpu-time";
import { makeClip } from "../../test/support/rendition-fixtures";
import { denoiseAudio } from "./denoise-audio";
import { resolveFfmpegPath } from "./ffmpeg-path";
import { normalizeAudio } from "./normalize-audio";
import { createLoudnessCache } from "./loudness-cache";
import { createRecentEntries } from "./recent-entries";
import { createPcmCache } from "./pcm-cache";
import { renderMp3 } from "./render-mp3";
import type { RenditionContext, RenditionSource } from "./rendition-context";
import { trimAudio } from "./trim-audio";
import { waveformAudio } from "./waveform-audio";

let dir: string;
const store = () => createFsBlobStore(join(dir, "blobs"));
const ffmpeg = resolveFfmpegPath();
const context = (): RenditionContext => ({ store: store(), ffmpeg, pcm: createPcmCache(), loudness: createLoudnessCache(), renditions: createRecentEntries() });
const sources = new Map<AcceptedMimeType, RenditionSource>();
const options = { iterations: 5, time: 0, warmupIterations: 1 };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rendition-bench-"));
  // 60 s: 2 s of noise-only lead and tail around 56 s of tone, all under noise at -40 dBFS.
  for (const mimeType of ["audio/m4a", "audio/webm", "audio/wav"] as const) {
    const bytes = await makeClip(mimeType, { lead: 2, tone: 56, tail: 2, noise: true, sampleRate: 44100 });
    const cid = rawCid(bytes);
    await store().writeAtomic(blobKey("bench", cid), Readable.from([bytes]));
    sources.set(mimeType, { appId: "bench", cid, mimeType });
  }
  console.log(`ffmpeg: ${ffmpeg}`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  const rows = [...cpu].map(([name, { ms, runs }]) => `${name.padEnd(32)} ${(ms / runs).toFixed(0).padStart(5)} ms`);
  console.log(["CPU per run (Node and ffmpeg)", ...rows].join("\n"));
});

/** CPU per run of each operation, by "<mimeType> <operation>". */
const cpu = new Map<string, { ms: number; runs: number }>();
const timed = (name: string, work: () => Promise<unknown>) => async () => {
  const start = cpuTimeMs();
  await work();
  const entry = cpu.get(name) ?? { ms: 0, runs: 0 };
  cpu.set(name, { ms: entry.ms + cpuTimeMs() - start, runs: entry.runs + 1 });
};

for (const mimeType of ["audio/m4a", "audio/webm", "audio/wav"] as const) {
  describe(`60 s ${mimeType}`, () => {
    bench("trim", timed(`${mimeType} trim`, () => trimAudio(context(), sources.get(mimeType)!)), options);
    bench("waveform", timed(`${mimeType} waveform`, () => waveformAudio(context(), sources.get(mimeType)!)), options);
    bench("normalize", timed(`${mimeType} normalize`, () => normalizeAudio(context(), sources.get(mimeType)!)), options);
    bench("mp3", timed(`${mimeType} mp3`, () => renderMp3(context(), sources.get(mimeType)!)), options);
    bench(
      "trim + waveform + mp3 together",
      async () => {
        const shared = context();
        const trimmed = await trimAudio(shared, sources.get(mimeType)!);
        const output = { appId: "bench", cid: trimmed.cid, mimeType };
        await Promise.all([waveformAudio(shared, output), renderMp3(shared, output)]);
      },
      options,
    );
    // As a pass runs it: trim has measured its output (measureOutput), so normalize starts from its figures. Its CPU
    // includes the mp3 rendition it writes beside its output, which a pass's render then finds made.
    let pass: RenditionContext | undefined;
    let trimmed: RenditionSource | undefined;
    const normalizeTrimmed = timed(`${mimeType} normalize after trim`, () => normalizeAudio(pass!, trimmed!));
    bench(
      "normalize after trim, with its mp3",
      async () => {
        if (!trimmed) {
          pass = context();
          trimmed = { appId: "bench", cid: (await trimAudio(pass, { ...sources.get(mimeType)!, measureOutput: true })).cid, mimeType };
        }
        await normalizeTrimmed();
      },
      options,
    );
    if (mimeType === "audio/m4a") bench("RNNoise denoise", () => denoiseAudio(context(), sources.get(mimeType)!).then(() => undefined), { ...options, iterations: 3 });
  });
}
