import { createHash } from "node:crypto";
import fc from "fast-check";
import { CID } from "multiformats/cid";
import * as raw from "multiformats/codecs/raw";
import { create as digestOf } from "multiformats/hashes/digest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AcceptedMimeType, acceptedMimeTypes } from "../core/records/accepted-types";
import { audioFixture, encodedNoise, pcmWavHeader } from "./support/audio-fixtures";
import { blobRows } from "./support/blob-rows";
import { backends } from "./support/databases";
import { multipartBody } from "./support/multipart-body";
import { storedKeys } from "./support/stored-keys";
import { startTestService, type TestService } from "./support/test-service";

const cidOf = (bytes: Buffer) => CID.createV1(raw.code, digestOf(0x12, createHash("sha256").update(bytes).digest())).toString();

describe.each(backends)("upload integrity on $name", ({ open }) => {
  let svc: TestService;
  let actors = 0;
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: open });
  });
  afterAll(() => svc?.close());

  // A fresh actor per upload: the upload limit (20 an hour per actor) is not what these tests are about.
  const upload = async (bytes: Buffer, type: string) => {
    const { body, contentType } = await multipartBody([{ name: "file", bytes, type }]);
    return svc.post("/api/v1/audio/upload", { actor: `fuzz-${++actors}`, body, headers: { "content-type": contentType } });
  };
  const appId = () => svc.tenants.alpha.appId;
  const durationOf = async (bytes: Buffer) => (await blobRows(svc.deps.sql, appId())).find((row) => row.cid === cidOf(bytes))?.durationMs;

  it("an 8 KB WAV whose header claims 20,000 s is stored with the 85 ms its bytes hold", async () => {
    const wav = Buffer.alloc(8192);
    pcmWavHeader(8192).copy(wav);
    wav.writeUInt32LE(20_000 * 96_000, 40);
    wav.writeUInt32LE(7, 44);
    const res = await upload(wav, "audio/wav");
    expect(res.status).toBe(201);
    expect(await durationOf(wav)).toBe(85);
  });

  it("a WAV or MP3 header claiming 2^31 seconds never overflows the column: measured from the bytes or refused", async () => {
    const wav = Buffer.alloc(8192);
    pcmWavHeader(8192).copy(wav);
    wav.writeUInt32LE(0xffffffff, 40);
    wav.writeUInt32LE(8, 44);
    expect((await upload(wav, "audio/wav")).status).toBe(201);
    expect(await durationOf(wav)).toBe(85);

    const mp3 = Buffer.from((await audioFixture("audio/mpeg")).bytes);
    const xing = mp3.indexOf("Xing");
    if (xing > 0) mp3.writeUInt32BE(0x7fffffff, xing + 8);
    expect((await upload(mp3, "audio/mpeg")).status).toBe(201);
    const ms = (await durationOf(mp3))!;
    expect(ms).toBeGreaterThan(950);
    expect(ms).toBeLessThan(1100);
  });

  it("the first 336 bytes of an Ogg Opus file hold no audio: 400 UNSUPPORTED_MEDIA_TYPE, and nothing is stored", async () => {
    const before = await storedKeys(svc.deps.blobs, "");
    const ogg = (await encodedNoise("ogg-opus-head", "audio/ogg", 1, ["-c:a", "libopus", "-ar", "48000", "-f", "ogg"])).bytes.subarray(0, 336);
    const res = await upload(ogg, "audio/ogg");
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(await storedKeys(svc.deps.blobs, "")).toEqual(before);
  });

  it("upload fuzz: mutated and truncated copies of every accepted type never answer 5xx, and exactly the 201s are stored", async () => {
    const originals = new Map<AcceptedMimeType, Buffer>();
    for (const mimeType of acceptedMimeTypes) originals.set(mimeType, (await audioFixture(mimeType)).bytes);
    const before = new Set(await storedKeys(svc.deps.blobs, "blobs/"));
    const accepted = new Set<string>();
    const statuses = new Map<number, number>();

    const extreme = fc.constantFrom(0, 1, 0x7f, 0x80, 0xff);
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant("truncate" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
      fc.record({ kind: fc.constant("flip" as const), at: fc.double({ min: 0, max: 1, noNaN: true }), value: fc.integer({ min: 0, max: 255 }) }),
      // Headers live at the start (and, for MP4 with its moov last, the end): aim a burst of extremes there.
      fc.record({
        kind: fc.constant("header" as const),
        at: fc.integer({ min: 0, max: 600 }),
        fromEnd: fc.boolean(),
        values: fc.array(extreme, { minLength: 1, maxLength: 8 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...acceptedMimeTypes), fc.array(mutation, { minLength: 1, maxLength: 4 }), async (mimeType, mutations) => {
        let bytes = Buffer.from(originals.get(mimeType)!);
        for (const m of mutations) {
          if (m.kind === "truncate") bytes = bytes.subarray(0, Math.floor(bytes.length * m.at));
          else if (m.kind === "flip" && bytes.length > 0) bytes[Math.min(bytes.length - 1, Math.floor(bytes.length * m.at))] = m.value;
          else if (m.kind === "header") {
            const start = m.fromEnd ? bytes.length - 1 - m.at : m.at;
            m.values.forEach((value, i) => {
              if (start + i >= 0 && start + i < bytes.length) bytes[start + i] = value;
            });
          }
        }
        const res = await upload(bytes, mimeType);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status, JSON.stringify(res.json)).toBeLessThan(500);
        if (res.status === 201) {
          expect(res.json.data.blob.ref.$link).toBe(cidOf(bytes));
          accepted.add(`blobs/${appId()}/${cidOf(bytes)}`);
        } else expect(res.json.error.code).toMatch(/^(UNSUPPORTED_MEDIA_TYPE|VALIDATION_ERROR)$/);
      }),
      { seed: 20261122, numRuns: 150 },
    );
    const stored = (await storedKeys(svc.deps.blobs, "blobs/")).filter((key) => !before.has(key));
    expect(new Set(stored)).toEqual(new Set([...accepted].filter((key) => !before.has(key))));
    expect(await storedKeys(svc.deps.blobs, "staging/")).toEqual([]);
    // Every stored duration is one the bytes can hold.
    for (const row of await blobRows(svc.deps.sql, appId())) {
      expect(row.durationMs).toBeGreaterThanOrEqual(0);
      expect(row.durationMs!).toBeLessThanOrEqual(row.size * 16);
    }
    // Both outcomes were exercised.
    expect(statuses.get(201)).toBeGreaterThan(10);
    expect(statuses.get(400)).toBeGreaterThan(10);
  });
});
