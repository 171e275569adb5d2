/**
 * A pass's trim, normalize and mp3 rendition through the rendition service (docs/decisions.md#rendition-service,
 * docs/decisions.md#loudness): normalize starts from the figures trim measured while writing its output, and
 * stores the mp3 rendition of its own output beside it, so the render that follows encodes nothing. Each answer
 * still describes its own stored bytes.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobKey, renditionKey } from "../blobs/blob-key";
import type { FsBlobStore } from "../blobs/blob-store";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { rawCid } from "../blobs/raw-cid";
import { createLogger } from "../observability/logger";
import type { AcceptedMimeType } from "../records/accepted-types";
import { meterLoudness } from "../../test/support/loudness-meter";
import { makeClip } from "../../test/support/rendition-fixtures";
import { parseRenditionConfig } from "./rendition-config";
import { type RunningRendition, startRendition } from "./rendition-node-root";

const token = "normalize-after-trim-token-000000000000000000";
const appId = "demo";
const logger = createLogger("silent");
const lines: Record<string, unknown>[] = [];
const capturing = { ...logger, debug() {}, warn() {}, error() {}, info: (_: string, ...extra: unknown[]) => void lines.push(Object.assign({}, ...extra)) };

let dir: string;
let store: FsBlobStore;
let service: RunningRendition;
let fresh: RunningRendition;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "normalize-after-trim-"));
  store = createFsBlobStore(join(dir, "blobs"));
  const config = parseRenditionConfig({ SVC_BLOB_DIR: join(dir, "blobs"), RENDITION_SERVICE_TOKEN: token, RENDITION_PORT: "0" }, logger);
  service = await startRendition(config, capturing as typeof logger, { store });
  // Another process on the same store: nothing of the first one's in its caches.
  fresh = await startRendition(config, logger, { store });
});

afterAll(async () => {
  await service?.close();
  await fresh?.close();
  await rm(dir, { recursive: true, force: true });
});

const call = async (path: string, cid: string, mimeType: AcceptedMimeType, base = service, extra: object = {}) => {
  const response = await fetch(`${base.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({ appId, cid, mimeType, ...extra }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: any }).data;
};
const steps = (path: string, cid: string) => (lines.find((l) => l.path === path && l.cid === cid)?.ffmpeg as { step: string }[] | undefined)?.map((s) => s.step);
const stored = (key: string) => readFile(join(dir, "blobs", key));
/** A clip of `tone` seconds between a second of silence at each end, stored under its CID. */
const storedClip = async (mimeType: AcceptedMimeType, tone: number, seed: number) => {
  const bytes = await makeClip(mimeType, { lead: 1, tone, tail: 1, noise: true, seed });
  const cid = rawCid(bytes);
  await store.writeAtomic(blobKey(appId, cid), Readable.from([bytes]));
  return cid;
};

describe.each<AcceptedMimeType>(["audio/webm", "audio/m4a", "audio/wav", "audio/mpeg"])("trim, then normalize, then render, of %s", (mimeType) => {
  it("normalize measures nothing trim measured, its figures are its bytes', and render encodes nothing normalize made", async () => {
    // Quiet speech-like tone (about -34 LUFS) between silences: trim cuts, normalize lifts it 15 LU.
    const cid = await storedClip(mimeType, 5, 11);

    // The pass asks this when normalize follows its trim (the rendition trimmer's measureOutput).
    const trimmed = await call("/v1/trim", cid, mimeType, service, { measureOutput: true });
    expect(trimmed.cid).not.toBe(cid);
    const normalized = await call("/v1/normalize", trimmed.cid, mimeType);
    expect(normalized.cid).not.toBe(trimmed.cid);
    const mp3 = mimeType !== "audio/mpeg";
    // An mp3 upload is measured after its encode, not while: its stored file trims the encoder's delay (encode-measured.ts).
    expect(steps("/v1/normalize", trimmed.cid)).toEqual(mp3 ? ["gain-encode+measure"] : ["gain-encode", "gain-encode:measure"]);

    const before = await meterLoudness(await stored(blobKey(appId, trimmed.cid)));
    const after = await meterLoudness(await stored(blobKey(appId, normalized.cid)));
    expect(normalized.loudness.before.integratedLufs).toBeCloseTo(before.integratedLufs, 1);
    expect(normalized.loudness.before.truePeakDbtp).toBeCloseTo(before.truePeakDbtp, 1);
    expect(normalized.loudness.integratedLufs).toBeCloseTo(after.integratedLufs, 1);
    expect(normalized.loudness.truePeakDbtp).toBeCloseTo(after.truePeakDbtp, 1);

    const rendered = await call("/v1/render", normalized.cid, mimeType);
    if (!mp3) return;
    expect(steps("/v1/render", normalized.cid)).toBeUndefined();
    const made = await stored(renditionKey(blobKey(appId, normalized.cid), "mp3"));
    expect(rendered).toEqual({ cid: rawCid(made), mimeType: "audio/mpeg", size: made.length, durationMs: normalized.durationMs });
    // What a render from the stored variant alone makes (another process, nothing cached) is the same bytes.
    await call("/v1/render", normalized.cid, mimeType, fresh);
    expect(rawCid(await stored(renditionKey(blobKey(appId, normalized.cid), "mp3")))).toBe(rendered.cid);
  });

  it("a trim a normalize follows makes no waveform (normalize's decode makes the one read next): the trimmed clip's waveform, asked for, is one decode, and what another process makes", async () => {
    const cid = await storedClip(mimeType, 4, 12);
    const trimmed = await call("/v1/trim", cid, mimeType, service, { measureOutput: true });
    expect(trimmed.cid).not.toBe(cid);

    const waveform = await call("/v1/waveform", trimmed.cid, mimeType);
    expect(steps("/v1/waveform", trimmed.cid)).toEqual(["decode"]);
    expect(waveform).toEqual(await call("/v1/waveform", trimmed.cid, mimeType, fresh));

    // Normalize's output: its waveform came with its measurement, so the stage decodes nothing.
    const normalized = await call("/v1/normalize", trimmed.cid, mimeType);
    expect(await call("/v1/waveform", normalized.cid, mimeType)).toEqual(await call("/v1/waveform", normalized.cid, mimeType, fresh));
    expect(steps("/v1/waveform", normalized.cid)).toBeUndefined();
  });
});
