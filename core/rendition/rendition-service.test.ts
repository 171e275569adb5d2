/** The rendition service over real HTTP, real ffmpeg and a file blob store: docs/decisions.md#rendition-service. */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { connect } from "node:net";
import { once } from "node:events";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AcceptedMimeType, acceptedAudioTypes } from "../records/accepted-types";
import { rawCid } from "../blobs/raw-cid";
import { sniffAudioFamily } from "../audio/sniff-audio";
import { blobKey, renditionKey } from "../blobs/blob-key";
import type { FsBlobStore } from "../blobs/blob-store";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { createLogger } from "../observability/logger";
import { channelLayout, clipFilter, decodeSamples, ffmpeg, levelDb, makeClip, packetHashes } from "../../test/support/rendition-fixtures";
import { parseRenditionConfig } from "./rendition-config";
import { type RunningRendition, startRendition } from "./rendition-node-root";
import { ffmpegRunsInFlight } from "./run-ffmpeg";

const token = "rendition-test-token-0000000000000000000000";
const logger = createLogger("silent");
/** What the service logged at error level (ffmpeg's stderr goes here, never into an answer). */
const errorLines: { message: string; extra: unknown[] }[] = [];
/** What it logged at info level: one line per request. */
const infoLines: { message: string; extra: unknown[] }[] = [];
const capturing = {
  ...logger,
  debug() {},
  info: (message: string, ...extra: unknown[]) => void infoLines.push({ message, extra }),
  warn() {},
  error: (message: string, ...extra: unknown[]) => void errorLines.push({ message, extra }),
};
const appId = "demo";
const execFileAsync = promisify(execFile);

let dir: string;
let store: FsBlobStore;
let service: RunningRendition;
let tokenless: RunningRendition;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rendition-service-test-"));
  store = createFsBlobStore(join(dir, "blobs"));
  const config = parseRenditionConfig({ SVC_BLOB_DIR: join(dir, "blobs"), RENDITION_SERVICE_TOKEN: token, RENDITION_PORT: "0" }, logger);
  service = await startRendition(config, capturing as typeof logger, { store });
  tokenless = await startRendition({ ...config, token: undefined }, logger, { store });
});

afterAll(async () => {
  await service?.close();
  await tokenless?.close();
  await rm(dir, { recursive: true, force: true });
});

const put = async (bytes: Buffer) => {
  const cid = rawCid(bytes);
  await store.writeAtomic(blobKey(appId, cid), Readable.from([bytes]));
  return cid;
};

const call = async (path: string, body: unknown, options: { auth?: string | null; base?: RunningRendition } = {}) => {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  const auth = options.auth === undefined ? `Bearer ${token}` : options.auth;
  if (auth !== null) headers.Authorization = auth;
  const response = await fetch(`${(options.base ?? service).url}${path}`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
};

const blobBytes = async (cid: string) => Buffer.from(await readFile(join(dir, "blobs", "blobs", appId, cid)));

const routes = ["/v1/trim", "/v1/denoise", "/v1/normalize", "/v1/render", "/v1/waveform"];

describe("rendition service auth", () => {
  const someBody = { appId, cid: rawCid(Buffer.from("x")), mimeType: "audio/wav" };

  it.each(routes)("%s answers 503 when neither RENDITION_SERVICE_TOKEN nor SYSTEM_AUTH_TOKEN is set", async (route) => {
    const { status, body } = await call(route, someBody, { base: tokenless });
    expect(status).toBe(503);
    expect(body).toMatchObject({ success: false, error: { code: "SERVICE_UNAVAILABLE" } });
    expect(typeof body.requestId).toBe("string");
  });

  it.each(routes)("%s answers 401 for a wrong or missing bearer token", async (route) => {
    expect((await call(route, someBody, { auth: `Bearer ${token}x` })).body).toMatchObject({ success: false, error: { code: "UNAUTHORIZED" } });
    expect((await call(route, someBody, { auth: null })).status).toBe(401);
    expect((await call(route, someBody, { auth: token })).status).toBe(401);
  });

  it("falls back to SYSTEM_AUTH_TOKEN when RENDITION_SERVICE_TOKEN is unset", () => {
    expect(parseRenditionConfig({ SVC_BLOB_DIR: dir, SYSTEM_AUTH_TOKEN: token }, logger).token).toBe(token);
    expect(parseRenditionConfig({ SVC_BLOB_DIR: dir, SYSTEM_AUTH_TOKEN: token, RENDITION_SERVICE_TOKEN: `${token}r` }, logger).token).toBe(`${token}r`);
    expect(parseRenditionConfig({ SVC_BLOB_DIR: dir, SYSTEM_AUTH_TOKEN: "short", RENDITION_SERVICE_TOKEN: "" }, logger).token).toBeUndefined();
  });

  it("answers 404 in the envelope for an unknown route", async () => {
    const { status, body } = await call("/v1/transcode", someBody);
    expect(status).toBe(404);
    expect(body).toMatchObject({ success: false, error: { code: "NOT_FOUND" } });
  });
});

describe("rendition service errors", () => {
  it.each(routes)("%s answers 400 for a bad body", async (route) => {
    const cid = rawCid(Buffer.from("x"));
    for (const bad of ["not json", { appId, cid }, { appId, cid, mimeType: "audio/flac" }, { appId: "../x", cid, mimeType: "audio/wav" }, { appId, cid: "bafy", mimeType: "audio/wav" }, { appId, cid, mimeType: "audio/wav", extra: 1 }]) {
      const { status, body } = await call(route, bad);
      expect(status, JSON.stringify(bad)).toBe(400);
      expect(body.error.code).toBe("VALIDATION_ERROR");
    }
  });

  it.each(routes)("%s answers 404 when the source blob is missing", async (route) => {
    const { status, body } = await call(route, { appId, cid: rawCid(Buffer.from(`missing ${route}`)), mimeType: "audio/wav" });
    expect(status).toBe(404);
    expect(body.error.code).toBe("NOT_FOUND");
  });

  it.each(routes)("%s answers 502 when ffmpeg fails, with no ffmpeg output in the answer", async (route) => {
    const cid = await put(Buffer.from(`RIFF this is not audio at all ${route}`));
    const { status, body } = await call(route, { appId, cid, mimeType: "audio/wav" });
    expect(status).toBe(502);
    expect(body).toMatchObject({ success: false, error: { code: "INTERNAL", message: "ffmpeg failed to process the audio" } });
    const logged = errorLines.find((l) => l.message === "ffmpeg failed" && JSON.stringify(l.extra).includes(cid));
    expect(JSON.stringify(logged?.extra)).toMatch(/"stderr":"[^"]+/);
    expect(JSON.stringify(body)).not.toContain("Invalid data");
  });
});

describe("the request's log line", () => {
  it("names the source and output blobs and each ffmpeg run of the request with its time, so a slow request says where its time went", async () => {
    const cid = await put(await makeClip("audio/webm", { noise: true, seed: 7 }));
    const { status, body } = await call("/v1/trim", { appId, cid, mimeType: "audio/webm" });
    expect(status).toBe(200);
    const line = infoLines.map((l) => Object.assign({}, ...l.extra) as Record<string, unknown>).find((f) => f.path === "/v1/trim" && f.cid === cid);
    expect(line).toMatchObject({ status: 200, appId, cid, outputCid: body.data.cid });
    expect(line!.ffmpeg).toEqual([
      { step: "decode", ms: expect.any(Number) },
      { step: "trim-copy", ms: expect.any(Number) },
      { step: "trim:decode", ms: expect.any(Number) },
    ]);
    const ffmpegMs = (line!.ffmpeg as { ms: number }[]).reduce((sum, run) => sum + run.ms, 0);
    expect(ffmpegMs).toBeLessThanOrEqual(line!.durationMs as number);
  });

  it("names a trim that measures its output for normalize, the measurement in place of the output's decode, still within the request's time", async () => {
    const cid = await put(await makeClip("audio/webm", { noise: true, seed: 8 }));
    expect((await call("/v1/trim", { appId, cid, mimeType: "audio/webm", measureOutput: true })).status).toBe(200);
    const line = infoLines.map((l) => Object.assign({}, ...l.extra) as Record<string, unknown>).find((f) => f.path === "/v1/trim" && f.cid === cid);
    expect((line!.ffmpeg as { step: string }[]).map((run) => run.step)).toEqual(["decode", "trim-copy", "trim:measure"]);
    const ffmpegMs = (line!.ffmpeg as { ms: number }[]).reduce((sum, run) => sum + run.ms, 0);
    expect(ffmpegMs).toBeLessThanOrEqual(line!.durationMs as number);
  });
});

describe("trim", () => {
  // 1 s silence, 2 s tone, 1 s silence: the tone plus 150 ms either side is 2.3 s.
  const expectedMs = 2300;

  it.each<[AcceptedMimeType, boolean]>([
    ["audio/wav", false],
    ["audio/wav", true],
    ["audio/mpeg", false],
    ["audio/ogg", true],
    ["audio/webm", false],
    ["audio/m4a", true],
    ["audio/mp4", false],
  ])("trims %s (noise at -40 dBFS: %s) to within 150 ms of the expected duration, in the upload's family", async (mimeType, noise) => {
    const cid = await put(await makeClip(mimeType, { noise }));
    const { status, body } = await call("/v1/trim", { appId, cid, mimeType });
    expect(status).toBe(200);
    expect(body.data.mimeType).toBe(mimeType);
    expect(body.data.cid).not.toBe(cid);
    expect(Math.abs(body.data.durationMs - expectedMs)).toBeLessThanOrEqual(150);
    const bytes = await blobBytes(body.data.cid);
    expect(body.data.size).toBe(bytes.length);
    expect(rawCid(bytes)).toBe(body.data.cid);
    expect(await sniffAudioFamily(bytes)).toBe(acceptedAudioTypes[mimeType]);
    const decodedMs = ((await decodeSamples(bytes)).length / 48000) * 1000;
    expect(Math.abs(decodedMs - expectedMs)).toBeLessThanOrEqual(150);
  });

  it.each<AcceptedMimeType>(["audio/mpeg", "audio/ogg", "audio/webm", "audio/m4a", "audio/mp4"])(
    "cuts a lossy %s between its own packets: every packet of the trimmed file is one of the upload's, unchanged",
    async (mimeType) => {
      const bytes = await makeClip(mimeType, { noise: true, seed: 21 });
      const cid = await put(bytes);
      const { body } = await call("/v1/trim", { appId, cid, mimeType });
      const source = await packetHashes(bytes);
      const trimmed = await packetHashes(await blobBytes(body.data.cid));
      // 2.3 s of 4 s kept: more than half of the upload's packets, in one run, none of them encoded again.
      expect(trimmed.length).toBeGreaterThan(source.length / 2);
      expect(trimmed.length).toBeLessThan(source.length * 0.65);
      const at = source.indexOf(trimmed[0]!);
      expect(at).toBeGreaterThan(0);
      expect(trimmed).toEqual(source.slice(at, at + trimmed.length));
    },
  );

  it.each<AcceptedMimeType>(["audio/mpeg", "audio/ogg", "audio/webm", "audio/m4a", "audio/mp4", "audio/wav"])(
    "keeps the onset of speech that starts with the %s clip: nothing is cut at that end, so no packet the decoder needs is lost",
    async (mimeType) => {
      const bytes = await makeClip(mimeType, { lead: 0, tone: 2, tail: 1.5 });
      const { body } = await call("/v1/trim", { appId, cid: await put(bytes), mimeType });
      expect(Math.abs(body.data.durationMs - 2150)).toBeLessThanOrEqual(60);
      const [source, trimmed] = [await decodeSamples(bytes), await decodeSamples(await blobBytes(body.data.cid))];
      for (const at of [0, 0.02, 0.04]) expect(Math.abs(levelDb(trimmed, at, at + 0.02) - levelDb(source, at, at + 0.02))).toBeLessThan(1.5);
    },
  );

  it.each<[AcceptedMimeType, number]>([
    ["audio/mpeg", 1], ["audio/mpeg", 2], ["audio/ogg", 3], ["audio/webm", 3], ["audio/m4a", 1], ["audio/mp4", 2], ["audio/wav", 1],
  ])("answers a clip it trimmed unchanged when asked to trim it again (%s, seed %i): a rerun of trim reruns nothing downstream", async (mimeType, seed) => {
    const bytes = await makeClip(mimeType, { noise: true, seed, lead: 1 + seed * 0.013, tail: 1 + seed * 0.017 });
    const once = (await call("/v1/trim", { appId, cid: await put(bytes), mimeType })).body.data;
    const twice = (await call("/v1/trim", { appId, cid: once.cid, mimeType })).body.data;
    expect(twice).toEqual(once);
  });

  it.each<[string, AcceptedMimeType]>([
    ["chromium-10s-timeslice.webm", "audio/webm"],
    ["firefox-10s.ogg", "audio/ogg"],
    ["safari-10s.mp4", "audio/mp4"],
  ])("answers a browser recording it trimmed (%s) unchanged when asked to trim it again", async (file, mimeType) => {
    const bytes = await readFile(join(import.meta.dirname, "../../test/fixtures/browser-recordings", file));
    const once = (await call("/v1/trim", { appId, cid: await put(bytes), mimeType })).body.data;
    const twice = (await call("/v1/trim", { appId, cid: once.cid, mimeType })).body.data;
    expect(twice).toEqual(once);
  });

  it("encodes in the family when its muxer will not take the upload's codec as it is (mp3 in an m4a)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mp3-in-m4a-"));
    try {
      const file = join(dir, "clip.m4a");
      await execFileAsync(ffmpeg, ["-v", "error", "-filter_complex", clipFilter({ noise: true, seed: 22 }), "-ac", "1", "-c:a", "libmp3lame", "-f", "mp4", "-brand", "M4A ", file]);
      const bytes = await readFile(file);
      const cid = await put(bytes);
      const { status, body } = await call("/v1/trim", { appId, cid, mimeType: "audio/m4a" });
      expect(status).toBe(200);
      const line = infoLines.map((l) => Object.assign({}, ...l.extra) as Record<string, unknown>).find((f) => f.path === "/v1/trim" && f.cid === cid);
      expect((line!.ffmpeg as { step: string }[]).map((run) => run.step)).toEqual(["decode", "trim-copy", "trim-encode", "trim:decode"]);
      const trimmed = await blobBytes(body.data.cid);
      expect(await sniffAudioFamily(trimmed)).toBe("mp4");
      expect(Math.abs(((await decodeSamples(trimmed)).length / 48000) * 1000 - 2300)).toBeLessThanOrEqual(150);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("never trims a clip that is all silence to nothing", async () => {
    const bytes = await makeClip("audio/wav", { lead: 2, tone: 0, tail: 1 });
    const cid = await put(bytes);
    const { status, body } = await call("/v1/trim", { appId, cid, mimeType: "audio/wav" });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ cid, mimeType: "audio/wav", size: bytes.length });
    expect(Math.abs(body.data.durationMs - 3000)).toBeLessThanOrEqual(20);
  });

  it("leaves a clip with sound to both ends as it is", async () => {
    const bytes = await makeClip("audio/wav", { lead: 0, tone: 2, tail: 0, noise: true });
    const cid = await put(bytes);
    expect((await call("/v1/trim", { appId, cid, mimeType: "audio/wav" })).body.data.cid).toBe(cid);
  });
});

describe("waveform", () => {
  it("is BBC JSON v2, 8 bits, 20 points per second, flat in the silence and full in the tone", async () => {
    const cid = await put(await makeClip("audio/webm", { lead: 1, tone: 2, tail: 1 }));
    const { status, body } = await call("/v1/waveform", { appId, cid, mimeType: "audio/webm" });
    expect(status).toBe(200);
    const waveform = body.data;
    expect(waveform).toMatchObject({ version: 2, channels: 1, bits: 8, sample_rate: 48000, samples_per_pixel: 2400 });
    expect(Math.abs(waveform.length - 80)).toBeLessThanOrEqual(2);
    expect(waveform.data).toHaveLength(waveform.length * 2);
    const peak = (i: number) => Math.max(Math.abs(waveform.data[2 * i]), Math.abs(waveform.data[2 * i + 1]));
    // 0.5 full scale is 64 at 8 bits.
    for (const i of [2, 10, 18, 72, 78]) expect(peak(i)).toBeLessThanOrEqual(2);
    for (const i of [25, 40, 55]) expect(peak(i)).toBeGreaterThanOrEqual(55);
  });

  it("is made for an upload carrying 40 KB of tags (a podcast's show notes), and so are its trim and mp3: the tags stay out of the waveform's WAV", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tagged-"));
    try {
      for (const [mimeType, ext] of [["audio/mpeg", "mp3"], ["audio/wav", "wav"], ["audio/m4a", "m4a"]] as const) {
        const file = join(dir, `tagged.${ext}`);
        const graph = clipFilter({ lead: 1, tone: 2, tail: 1, noise: true });
        await execFileAsync(ffmpeg, ["-loglevel", "error", "-filter_complex", graph, "-metadata", `comment=${"show notes ".repeat(4000)}`, file]);
        const cid = await put(await readFile(file));
        const waveform = await call("/v1/waveform", { appId, cid, mimeType });
        expect(waveform.status, mimeType).toBe(200);
        expect(waveform.body.data.length, mimeType).toBeGreaterThanOrEqual(79);
        for (const path of ["/v1/trim", "/v1/render"]) expect((await call(path, { appId, cid, mimeType })).status, `${mimeType} ${path}`).toBe(200);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is made at the clip's own sample rate, so sound above 4 kHz shows at its height (a 6 kHz tone as tall as a 440 Hz one)", async () => {
    const height = async (mimeType: "audio/webm" | "audio/wav", recipe: { frequency: number; sampleRate?: number }) => {
      const cid = await put(await makeClip(mimeType, { lead: 0, tone: 1, tail: 0, ...recipe }));
      const { data } = (await call("/v1/waveform", { appId, cid, mimeType })).body;
      return { rate: data.sample_rate, peak: Math.max(...data.data.slice(4, -4).map(Math.abs)) };
    };
    const low = await height("audio/webm", { frequency: 440 });
    expect(low.peak).toBeGreaterThanOrEqual(55);
    for (const [mimeType, sampleRate] of [["audio/webm", 48000], ["audio/wav", 44100]] as const) {
      const high = await height(mimeType, { frequency: 6000, sampleRate });
      expect(high.rate, mimeType).toBe(sampleRate);
      expect(Math.abs(high.peak - low.peak), mimeType).toBeLessThanOrEqual(6);
    }
  });
});

describe("render", () => {
  it("stores an mp3 at the source's rendition path that decodes without error", async () => {
    const cid = await put(await makeClip("audio/ogg"));
    const { status, body } = await call("/v1/render", { appId, cid, mimeType: "audio/ogg" });
    expect(status).toBe(200);
    expect(body.data.mimeType).toBe("audio/mpeg");
    const bytes = Buffer.from(await readFile(join(dir, "blobs", ...renditionKey(blobKey(appId, cid), "mp3").split("/"))));
    expect(rawCid(bytes)).toBe(body.data.cid);
    expect(body.data.size).toBe(bytes.length);
    expect(await sniffAudioFamily(bytes)).toBe("mp3");
    const samples = await decodeSamples(bytes);
    expect(Math.abs(samples.length / 48 - 4000)).toBeLessThanOrEqual(100);
    expect(Math.abs(body.data.durationMs - 4000)).toBeLessThanOrEqual(100);
  });
});

describe("denoise", () => {
  // The noise is seeded: RNNoise takes 18 to 37 dB off fresh noise in these gaps from one seed to another, and a
  // rare draw came within a dB of the bound, so an unseeded clip made this test fail now and then.
  it("lowers the noise floor in the gaps by at least 15 dB with RNNoise, in the upload's family", async () => {
    const original = await makeClip("audio/wav", { noise: true, seed: 1 });
    const cid = await put(original);
    const { status, body } = await call("/v1/denoise", { appId, cid, mimeType: "audio/wav" });
    expect(status).toBe(200);
    expect(body.data.mimeType).toBe("audio/wav");
    const bytes = await blobBytes(body.data.cid);
    expect(await sniffAudioFamily(bytes)).toBe("wav");
    const before = await decodeSamples(original);
    const after = await decodeSamples(bytes);
    for (const [from, to] of [[0.1, 0.9], [3.1, 3.9]] as const) {
      expect(levelDb(before, from, to)).toBeGreaterThan(-41);
      expect(levelDb(after, from, to)).toBeLessThanOrEqual(levelDb(before, from, to) - 15);
    }
    expect(Math.abs(body.data.durationMs - 4000)).toBeLessThanOrEqual(20);
  });

  it("keeps the upload's channel count: a stereo clip comes back stereo, each channel denoised (the loudness target follows it)", async () => {
    const original = await makeClip("audio/ogg", { noise: true, channels: 2, seed: 1 });
    expect(await channelLayout(original)).toBe("stereo");
    const cid = await put(original);
    const { status, body } = await call("/v1/denoise", { appId, cid, mimeType: "audio/ogg" });
    expect(status).toBe(200);
    const bytes = await blobBytes(body.data.cid);
    expect(await channelLayout(bytes)).toBe("stereo");
    const before = await decodeSamples(original);
    const after = await decodeSamples(bytes);
    expect(levelDb(after, 0.1, 0.9)).toBeLessThanOrEqual(levelDb(before, 0.1, 0.9) - 15);
  });
});

describe("denoise of a long clip", () => {
  it("streams the samples through RNNoise: memory does not grow with the clip (3 minutes held as floats would be over 100 MiB)", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "rendition-long-"));
    try {
      const clip = join(scratch, "long.ogg");
      await execFileAsync(ffmpeg, ["-v", "error", "-f", "lavfi", "-i", "anoisesrc=r=16000:a=0.05:d=180", "-ac", "1", "-c:a", "libopus", "-b:a", "8k", clip]);
      const cid = await put(await readFile(clip));
      const baseline = process.memoryUsage().arrayBuffers;
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 10);
      const { status, body } = await call("/v1/denoise", { appId, cid, mimeType: "audio/ogg" }).finally(() => clearInterval(sampler));
      expect(status).toBe(200);
      expect(Math.abs(body.data.durationMs - 180_000)).toBeLessThanOrEqual(100);
      // Held as floats, the clip alone is 33 MiB, and the old decode held it three times over (measured: 142 MiB).
      expect((peak - baseline) / 2 ** 20).toBeLessThan(64);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});


describe("a caller that goes away", () => {
  /** A request the test can leave (`abort`): its connection closes before the answer. */
  const start = (route: string, cid: string) => {
    const abort = new AbortController();
    const answered = fetch(`${service.url}${route}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ appId, cid, mimeType: "audio/webm" }),
      signal: abort.signal,
    });
    return { abort: () => abort.abort(), answered };
  };
  // A long clip, louder than the target, so the run is still encoding when its caller leaves.
  const longClip = (seed: number) => makeClip("audio/webm", { lead: 1, tone: 40, tail: 1, noise: true, seed });

  it("stops the run once its only caller closed the connection: its ffmpeg runs are killed, nothing is stored", async () => {
    const cid = await put(await longClip(31));
    const stored = () => readdir(join(dir, "blobs", "blobs", appId), { recursive: true });
    const storedBefore = await stored();
    const before = ffmpegRunsInFlight();
    const caller = start("/v1/normalize", cid);
    await expect.poll(() => ffmpegRunsInFlight(), { timeout: 10_000, interval: 10 }).toBeGreaterThan(before);
    caller.abort();
    await expect(caller.answered).rejects.toThrow();
    await expect.poll(() => ffmpegRunsInFlight(), { timeout: 5_000, interval: 20 }).toBe(before);
    await expect.poll(() => infoLines.some((l) => JSON.stringify(l.extra).includes(cid) && JSON.stringify(l.extra).includes('"status":499'))).toBe(true);
    expect(errorLines.some((l) => JSON.stringify(l.extra).includes(cid))).toBe(false);
    expect(await stored()).toEqual(storedBefore);
  });

  it("one that leaves before its body has arrived ends nothing but its own request: the service answers the next", async () => {
    const { hostname, port } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    await once(socket, "connect");
    socket.write("POST /v1/trim HTTP/1.1\r\nHost: rendition\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"appId\":");
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call("/v1/transcode", {})).status).toBe(404);
  });

  it("a render is finished and stored though its only caller left: the next playback finds it", async () => {
    const cid = await put(await longClip(33));
    const before = ffmpegRunsInFlight();
    const caller = start("/v1/render", cid);
    await expect.poll(() => ffmpegRunsInFlight(), { timeout: 10_000, interval: 10 }).toBeGreaterThan(before);
    caller.abort();
    await expect(caller.answered).rejects.toThrow();
    const rendition = join(dir, "blobs", ...renditionKey(blobKey(appId, cid), "mp3").split("/"));
    await expect.poll(() => readFile(rendition).then((b) => b.length, () => 0), { timeout: 20_000, interval: 50 }).toBeGreaterThan(0);
  });

  it("runs on for the callers still waiting when one of two sharing a run leaves", async () => {
    const cid = await put(await longClip(32));
    const leaving = start("/v1/normalize", cid);
    const staying = start("/v1/normalize", cid);
    await expect.poll(() => ffmpegRunsInFlight(), { timeout: 10_000, interval: 10 }).toBeGreaterThan(0);
    leaving.abort();
    await expect(leaving.answered).rejects.toThrow();
    const answer = await staying.answered;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { data: { cid: string } }).data.cid).not.toBe(cid);
  });
});
