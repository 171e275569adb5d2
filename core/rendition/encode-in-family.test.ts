/** encode-in-family.ts: an external denoiser's mp3 made like the upload, and described as stored. */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import type { FsBlobStore } from "../blobs/blob-store";
import type { AcceptedMimeType } from "../records/accepted-types";
import { channelLayout, decodeSamples, ffmpeg, makeClip } from "../../test/support/rendition-fixtures";
import { encodeInFamily } from "./encode-in-family";
import { analysisRate } from "./pcm";

const run = promisify(execFile);
let dir: string;
let store: FsBlobStore;
let answer: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "encode-in-family-test-"));
  store = createFsBlobStore(join(dir, "blobs"));
  // The service answers mono mp3 at 44.1 kHz.
  answer = await makeClip("audio/mpeg", { lead: 0.2, tone: 0.5, tail: 0.2, sampleRate: 44100 });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const encode = async (upload: Buffer, mimeType: AcceptedMimeType) => {
  const variant = await encodeInFamily({ store, ffmpeg }, answer, "mp3", { appId: "demo", mimeType, bytes: upload });
  return { variant, stored: await readFile(join(dir, "blobs", "blobs", "demo", variant.cid)) };
};

describe("re-encoding an answer like the upload", () => {
  it.each<[number, string, string, AcceptedMimeType, string]>([
    [3, "libvorbis", "ogg", "audio/ogg", "3.0"],
    [4, "flac", "ogg", "audio/ogg", "quad"],
    [4, "libvorbis", "webm", "audio/webm", "quad"],
  ])("keeps a %i-channel %s upload's channel count in %s, in the Opus layout of that count", async (channels, codec, format, mimeType, layout) => {
    const file = join(dir, `upload-${channels}-${codec}.${format}`);
    await run(ffmpeg, ["-v", "error", "-f", "lavfi", "-i", "sine=f=440:r=48000:d=0.5", "-af", `aformat=channel_layouts=${layout}`, "-c:a", codec, "-f", format, file]);
    const { stored } = await encode(await readFile(file), mimeType);
    expect(await channelLayout(stored)).toBe(layout);
  });

  it.each<AcceptedMimeType>(["audio/m4a", "audio/mp4", "audio/ogg", "audio/wav"])(
    "answers the decoded length of the stored %s variant (an AAC encoder pads its last frame)",
    async (mimeType) => {
      const { variant, stored } = await encode(await makeClip(mimeType, { tone: 0.5 }), mimeType);
      const decodedMs = ((await decodeSamples(stored, analysisRate)).length * 1000) / analysisRate;
      expect(Math.abs(variant.durationMs - decodedMs)).toBeLessThanOrEqual(1);
    },
  );
});
