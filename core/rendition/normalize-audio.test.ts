/**
 * `POST /v1/normalize` over real HTTP and real ffmpeg (docs/decisions.md#loudness): every clip of the corpus lands
 * on its target as the independent meter (ebur128, true peak) reads the stored bytes, in its family and channel count.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sniffAudioFamily } from "../audio/sniff-audio";
import { blobKey } from "../blobs/blob-key";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { rawCid } from "../blobs/raw-cid";
import { createLogger } from "../observability/logger";
import { type AcceptedMimeType, acceptedAudioTypes } from "../records/accepted-types";
import type { Loudness } from "../records/loudness";
import { type CorpusClip, loudnessCorpus, makeCorpusClip } from "../../test/support/loudness-corpus";
import { meterLoudness } from "../../test/support/loudness-meter";
import { parseRenditionConfig } from "./rendition-config";
import { type RunningRendition, startRendition } from "./rendition-node-root";

const token = "normalize-test-token-00000000000000000000000";
const appId = "demo";
const logger = createLogger("silent");
let dir: string;
let service: RunningRendition;
const results: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "normalize-test-"));
  const config = parseRenditionConfig({ SVC_BLOB_DIR: dir, RENDITION_SERVICE_TOKEN: token, RENDITION_PORT: "0" }, logger);
  service = await startRendition(config, logger, { store: createFsBlobStore(dir) });
});

afterAll(async () => {
  await service?.close();
  await rm(dir, { recursive: true, force: true });
  if (results.length) console.info(["clip | input LUFS, dBTP | output LUFS, dBTP", ...results].join("\n"));
});

interface Normalized {
  cid: string;
  mimeType: string;
  size: number;
  durationMs: number;
  loudness: Loudness;
}

async function normalize(bytes: Buffer, mimeType: AcceptedMimeType): Promise<{ status: number; text: string; data: Normalized; stored: Buffer }> {
  const cid = rawCid(bytes);
  await createFsBlobStore(dir).writeAtomic(blobKey(appId, cid), Readable.from([bytes]));
  const response = await fetch(`${service.url}/v1/normalize`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ appId, cid, mimeType }),
  });
  const text = await response.text();
  const data = (JSON.parse(text) as { data: Normalized }).data;
  const stored = response.status === 200 ? await readFile(join(dir, "blobs", appId, data.cid)) : Buffer.alloc(0);
  return { status: response.status, text, data, stored };
}

const targetOf = (channels: number) => (channels === 1 ? -19 : -16);

describe("normalize: the loudness corpus", () => {
  it("has at least 20 clips, mono, stereo and more, in every accepted family", () => {
    expect(loudnessCorpus.length).toBeGreaterThanOrEqual(20);
    expect(new Set(loudnessCorpus.map((c) => c.mimeType))).toEqual(new Set(Object.keys(acceptedAudioTypes)));
    expect(new Set(loudnessCorpus.map((c) => c.channels))).toEqual(new Set([1, 2, 6]));
  });

  it.each(loudnessCorpus.map((clip) => [clip.name, clip] as [string, CorpusClip]))(
    "%s: the stored output is within ±1 LU of its target and at most -1 dBTP, in the upload's family and channel count",
    async (name, clip) => {
      const original = await makeCorpusClip(clip);
      const input = await meterLoudness(original);
      const { status, data, stored } = await normalize(original, clip.mimeType);
      expect(status).toBe(200);
      const output = await meterLoudness(stored);
      results.push(`${name} | ${input.integratedLufs}, ${input.truePeakDbtp} | ${output.integratedLufs}, ${output.truePeakDbtp}`);

      expect(data.mimeType).toBe(clip.mimeType);
      expect(await sniffAudioFamily(stored)).toBe(acceptedAudioTypes[clip.mimeType]);
      expect(rawCid(stored)).toBe(data.cid);
      expect(data.size).toBe(stored.length);
      expect(output.channels).toBe(clip.channels);
      expect(Math.abs(data.durationMs - (clip.seconds ?? 4) * 1000)).toBeLessThanOrEqual(50);
      // Lossy or not, no margin is taken: the encoders' headroom comes off the limiter's ceiling instead.
      expect(Math.abs(output.integratedLufs - targetOf(clip.channels))).toBeLessThanOrEqual(1);
      expect(output.truePeakDbtp).toBeLessThanOrEqual(-1);
      // The answer describes the stored bytes and the bytes it started from.
      expect(data.loudness.integratedLufs).toBeCloseTo(output.integratedLufs, 1);
      expect(data.loudness.truePeakDbtp).toBeCloseTo(output.truePeakDbtp, 1);
      expect(data.loudness.before.integratedLufs).toBeCloseTo(input.integratedLufs, 1);
      expect(data.loudness.before.truePeakDbtp).toBeCloseTo(input.truePeakDbtp, 1);
      expect(data.loudness.rangeLu).toEqual(expect.any(Number));
    },
  );
});

describe("normalize: clips left as they are", () => {
  const silence: CorpusClip = { name: "silence", mimeType: "audio/wav", channels: 2, sampleRate: 48000, exprs: ["0"], gainDb: 0 };

  it("leaves digital silence unchanged: no gain, null figures, no NaN or Infinity in the JSON", async () => {
    const original = await makeCorpusClip(silence);
    const { status, text, data } = await normalize(original, "audio/wav");
    expect(status).toBe(200);
    expect(data).toMatchObject({ cid: rawCid(original), mimeType: "audio/wav", size: original.length, durationMs: 4000 });
    const none = { integratedLufs: null, truePeakDbtp: null, rangeLu: null };
    expect(data.loudness).toEqual({ ...none, before: none });
    expect(text).not.toMatch(/NaN|Infinity/);
  });

  it("leaves a clip with no gated loudness (below the -70 LUFS gate) unchanged, with its true peak", async () => {
    const faint: CorpusClip = { ...silence, name: "faint", channels: 1, exprs: ["0.0002*sin(2*PI*1000*t)"] };
    const original = await makeCorpusClip(faint);
    const { data } = await normalize(original, "audio/wav");
    expect(data.cid).toBe(rawCid(original));
    expect(data.loudness).toMatchObject({ integratedLufs: null, rangeLu: null, before: { integratedLufs: null, rangeLu: null } });
    // 0.0002 of full scale is -74 dBFS, give or take 16-bit quantization.
    expect(data.loudness.truePeakDbtp).toBeGreaterThan(-76);
    expect(data.loudness.truePeakDbtp).toBeLessThan(-72);
  });

  it("leaves a clip already on target unchanged: normalizing its own output changes nothing", async () => {
    const first = await normalize(await makeCorpusClip(loudnessCorpus[0]!), loudnessCorpus[0]!.mimeType);
    const again = await normalize(first.stored, loudnessCorpus[0]!.mimeType);
    expect(again.data.cid).toBe(first.data.cid);
    expect(again.data.loudness.integratedLufs).toBe(first.data.loudness.integratedLufs);
    expect(again.data.loudness.before).toEqual({ ...first.data.loudness, before: undefined });
  });

  it("reports no loudness range for a clip shorter than the 3 s windows it is measured over", async () => {
    const short = await makeCorpusClip({ ...loudnessCorpus[0]!, seconds: 2 });
    const { data } = await normalize(short, "audio/wav");
    expect(data.loudness.integratedLufs).toEqual(expect.any(Number));
    expect(data.loudness.rangeLu).toBeNull();
    expect(data.loudness.before.rangeLu).toBeNull();
  });
});
