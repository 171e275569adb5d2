/**
 * `POST /v1/normalize` over real HTTP and real ffmpeg (docs/decisions.md#loudness): every clip of the corpus lands
 * on its target as the independent meter (ebur128, true peak) reads the stored bytes, in its family and channel count.
 */
import { execFile } from "node:child_process";
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { promisify } from "node:util";
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
import { ffmpeg } from "../../test/support/rendition-fixtures";
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

async function normalize(
  bytes: Buffer,
  mimeType: AcceptedMimeType,
  on = { service, dir },
): Promise<{ status: number; text: string; data: Normalized; stored: Buffer }> {
  const { service, dir } = on;
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

const speech = loudnessCorpus[0]!.exprs[0]!;
/** Half a second of quiet speech under a full-scale click every 0.37 s: the limiter takes most of each step of gain. */
const shortClicks = `${speech}*0.03+0.98*lt(mod(t,0.37),0.0003)`;
const shortClickClips: CorpusClip[] = [
  { name: "0.5 s of quiet speech with full-scale clicks, mono mp3", mimeType: "audio/mpeg", channels: 1, sampleRate: 44100, exprs: [shortClicks], gainDb: 0, seconds: 0.5 },
  { name: "0.5 s of quiet speech with full-scale clicks, stereo x-m4a", mimeType: "audio/x-m4a", channels: 2, sampleRate: 44100, exprs: [shortClicks], gainDb: 0, seconds: 0.5 },
];

describe("normalize: the loudness corpus", () => {
  it("has at least 20 clips, mono, stereo and more, in every accepted family", () => {
    expect(loudnessCorpus.length).toBeGreaterThanOrEqual(20);
    expect(new Set(loudnessCorpus.map((c) => c.mimeType))).toEqual(new Set(Object.keys(acceptedAudioTypes)));
    expect(new Set(loudnessCorpus.map((c) => c.channels))).toEqual(new Set([1, 2, 6]));
  });

  it.each([...loudnessCorpus, ...shortClickClips].map((clip) => [clip.name, clip] as [string, CorpusClip]))(
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
      expect(data.loudness.rangeLu).toEqual((clip.seconds ?? 4) >= 3.5 ? expect.any(Number) : null);
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

  it.each([
    ["mono wav", "audio/wav", 1],
    ["stereo m4a", "audio/m4a", 2],
  ] as const)("holds a clip too short for gated loudness (0.3 s) but peaking over -1 dBTP to the limit (%s): it is not silence", async (_, mimeType, channels) => {
    const word: CorpusClip = { ...silence, name: "loud word", mimeType, channels, exprs: Array(channels).fill("0.99*sin(2*PI*440*t)"), seconds: 0.3 };
    const original = await makeCorpusClip(word);
    // The meter's -70 is its gate: no 400 ms block to measure.
    expect((await meterLoudness(original)).integratedLufs ?? -70).toBeLessThanOrEqual(-70);
    const { status, data, stored } = await normalize(original, mimeType);
    expect(status).toBe(200);
    expect(data.cid).not.toBe(rawCid(original));
    expect((await meterLoudness(stored)).truePeakDbtp).toBeLessThanOrEqual(-1);
    expect(data.loudness.truePeakDbtp).toBeLessThanOrEqual(-1);
  });

  it("leaves a clip already on target unchanged: normalizing its own output changes nothing", async () => {
    const first = await normalize(await makeCorpusClip(loudnessCorpus[0]!), loudnessCorpus[0]!.mimeType);
    const again = await normalize(first.stored, loudnessCorpus[0]!.mimeType);
    expect(again.data.cid).toBe(first.data.cid);
    expect(again.data.loudness.integratedLufs).toBe(first.data.loudness.integratedLufs);
    expect(again.data.loudness.before).toEqual({ ...first.data.loudness, before: undefined });
  });

  it("leaves a clip within ±1 LU of its target and under -1 dBTP unchanged (5.1 webm at -16.8 LUFS): an output is never made again", async () => {
    const clip: CorpusClip = { name: "5.1 webm", mimeType: "audio/webm", channels: 6, sampleRate: 48000, exprs: [speech, speech, speech, "0", `${speech}*0.5`, `${speech}*0.5`], gainDb: -5.4, seconds: 1 };
    const original = await makeCorpusClip(clip);
    expect((await meterLoudness(original)).integratedLufs).toBe(-16.8);
    const { status, data } = await normalize(original, clip.mimeType);
    expect(status).toBe(200);
    expect(data.cid).toBe(rawCid(original));
  });

  it("reports no loudness range for a clip shorter than the 3 s windows it is measured over", async () => {
    const short = await makeCorpusClip({ ...loudnessCorpus[0]!, seconds: 2 });
    const { data } = await normalize(short, "audio/wav");
    expect(data.loudness.integratedLufs).toEqual(expect.any(Number));
    expect(data.loudness.rangeLu).toBeNull();
    expect(data.loudness.before.rangeLu).toBeNull();
  });
});

const run = promisify(execFile);
/** A clip of ffmpeg's `lavfi` source, encoded with `codec` into a file named `name` (its extension sets the format). */
const lavfiClip = async (source: string, codec: string[], name: string): Promise<Buffer> => {
  const workDir = await mkdtemp(join(tmpdir(), "normalize-clip-"));
  try {
    const file = join(workDir, name);
    await run(ffmpeg, ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", source, "-fflags", "+bitexact", ...codec, file]);
    return await readFile(file);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
};

describe("normalize: uploads libopus would refuse as decoded", () => {
  // ffmpeg's FLAC decoder labels 5 and 6 channels 5.0(side) and 5.1(side), layouts libopus refuses.
  it.each([["5.0(side)", 5, "5.0"], ["5.1(side)", 6, "5.1"]] as const)(
    "normalizes a %s FLAC-in-Ogg upload to Opus, keeping its %i channels",
    async (layout, channels, opusLayout) => {
      const original = await lavfiClip(`aevalsrc=exprs='0.3*sin(2*PI*200*t)':c=${layout}:s=48000:d=1`, ["-c:a", "flac", "-f", "ogg"], "clip.ogg");

      const { status, data, stored } = await normalize(original, "audio/ogg");
      expect(status).toBe(200);
      const output = await meterLoudness(stored);
      expect(Math.abs(output.integratedLufs - targetOf(channels))).toBeLessThanOrEqual(1);
      expect(output.truePeakDbtp).toBeLessThanOrEqual(-1);
      expect(data.loudness.integratedLufs).toBeCloseTo(output.integratedLufs, 1);
      const { stderr } = await run(ffmpeg, ["-hide_banner", "-i", join(dir, "blobs", appId, data.cid)]).catch((error: { stderr: string }) => error);
      expect(stderr).toMatch(new RegExp(`Audio: opus, 48000 Hz, ${opusLayout.replace(".", "\\.")},`));
    },
  );
});

describe("normalize: WAV layouts Matroska does not carry", () => {
  // Streamed through Matroska, 3-channel PCM read back as 2.1 (its centre weighed as LFE, not at all) and quad as 4.0.
  it.each([["3.0", 3], ["quad", 4]] as const)(
    "a %s WAV upload is measured with its own channel layout: the stored file is on target and its figures are the meter's",
    async (layout, channels) => {
      const source = `aevalsrc=exprs='${speech.replaceAll(",", "\\,")}':c=${layout}:s=48000:d=4,volume=-20dB`;
      const original = await lavfiClip(source, ["-c:a", "pcm_s16le"], "clip.wav");

      const { status, data, stored } = await normalize(original, "audio/wav");
      expect(status).toBe(200);
      const output = await meterLoudness(stored);
      expect(Math.abs(output.integratedLufs - targetOf(channels))).toBeLessThanOrEqual(1);
      expect(output.truePeakDbtp).toBeLessThanOrEqual(-1);
      expect(data.loudness.integratedLufs).toBeCloseTo(output.integratedLufs, 1);
      expect(data.loudness.truePeakDbtp).toBeCloseTo(output.truePeakDbtp, 1);
    },
  );
});

describe("normalize: a target no attempt reaches", () => {
  let failing: RunningRendition;
  let failingDir: string;
  const errors: string[] = [];

  beforeAll(async () => {
    failingDir = await mkdtemp(join(tmpdir(), "normalize-unreachable-"));
    // An ffmpeg that drops every gain (volume=1): no attempt moves the clip's loudness.
    const wrapper = join(failingDir, "ffmpeg");
    await writeFile(
      wrapper,
      `#!/usr/bin/env bash
args=()
for a in "$@"; do
  [[ $a =~ ^(.*)volume=-?[0-9.]+dB(.*)$ ]] && a="\${BASH_REMATCH[1]}volume=1\${BASH_REMATCH[2]}"
  args+=("$a")
done
exec ${JSON.stringify(ffmpeg)} "\${args[@]}"
`,
    );
    await chmod(wrapper, 0o755);
    const env = { SVC_BLOB_DIR: failingDir, RENDITION_SERVICE_TOKEN: token, RENDITION_PORT: "0", FFMPEG_PATH: wrapper };
    const capturing = { ...logger, debug() {}, info() {}, warn() {}, error: (message: string, ...extra: unknown[]) => void errors.push(JSON.stringify({ message, extra })) };
    failing = await startRendition(parseRenditionConfig(env, logger), capturing as typeof logger, { store: createFsBlobStore(failingDir) });
  });

  afterAll(async () => {
    await failing?.close();
    await rm(failingDir, { recursive: true, force: true });
  });

  it("fails the request (502) and stores nothing rather than store a variant off its target as ready", async () => {
    const original = await makeCorpusClip({ ...loudnessCorpus[0]!, seconds: 1 });
    const { status, data } = await normalize(original, loudnessCorpus[0]!.mimeType, { service: failing, dir: failingDir });
    expect(status).toBe(502);
    expect(data).toBeUndefined();
    expect(await readdir(join(failingDir, "blobs", appId))).toEqual([rawCid(original)]);
    expect(await readdir(failingDir)).not.toContain("renditions");
    // The operator's log says why, with every attempt's figures.
    expect(errors.join("\n")).toMatch(/normalize missed its target \(-19 LUFS ±1 LU, at most -1 dBTP\): the closest of 8 attempts measured -\d+\.\d LUFS/);
  });
});
