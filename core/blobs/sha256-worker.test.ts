import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { pcmWav } from "../../test/support/audio-fixtures";
import { scanAudio } from "../audio/scan-audio";
import { rawCid } from "./raw-cid";
import { crashHashWorker, createWorkerHash, spareHashBuffers, workerHashCount } from "./sha256-worker";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest();

/** Streams `bytes` in 64 KiB chunks, failing as a dropped connection would at `failAt` when given. */
const streamOf = (bytes: Buffer, { failAt }: { failAt?: number } = {}) => {
  let at = 0;
  return new Readable({
    read() {
      if (failAt !== undefined && at >= failAt) return void this.destroy(new Error("client went away"));
      if (at >= bytes.length) this.push(null);
      else this.push(bytes.subarray(at, (at += 64 * 1024)));
    },
  });
};

describe("the upload hash worker", () => {
  it("concurrent uploads hash independently in the worker", async () => {
    const a = Buffer.alloc(3 * 1024 * 1024, 1);
    const b = Buffer.alloc(2 * 1024 * 1024, 2);
    const hashA = createWorkerHash();
    const hashB = createWorkerHash();
    for (let at = 0; at < a.length; at += 1024 * 1024) {
      hashA.update([a.subarray(at, at + 1024 * 1024)]);
      if (at < b.length) hashB.update([b.subarray(at, at + 1024 * 1024)]);
    }
    const [digestA, digestB] = await Promise.all([hashA.digest(), hashB.digest()]);
    expect(Buffer.from(digestA)).toEqual(sha256(a));
    expect(Buffer.from(digestB)).toEqual(sha256(b));
    // And through the scan, two uploads at once each get their own CID.
    const wavA = pcmWav(3 * 1024 * 1024 + 44);
    const wavB = pcmWav(1024 * 1024 + 44);
    const scans = await Promise.all([wavA, wavB].map((bytes) => scanAudio({ source: streamOf(bytes), mimeType: "audio/wav" })));
    expect(scans.map((scan) => scan.cid)).toEqual([rawCid(wavA), rawCid(wavB)]);
    expect(await workerHashCount()).toBe(0);
  });

  it("batches handed to the worker are copied, never detached or changed under a pending disk write", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const hash = createWorkerHash();
    hash.update([chunk.subarray(0, 512 * 1024), chunk.subarray(512 * 1024)]);
    expect(chunk.buffer.byteLength).toBe(1024 * 1024);
    expect(chunk.length).toBe(1024 * 1024);
    expect(chunk.every((byte) => byte === 7)).toBe(true);
    expect(Buffer.from(await hash.digest())).toEqual(sha256(Buffer.alloc(1024 * 1024, 7)));
  });

  it("the worker gives each batch's buffer back once hashed, and the next batches are copied into those buffers rather than fresh memory", async () => {
    const batch = Buffer.alloc(1024 * 1024, 5);
    const first = createWorkerHash();
    for (let i = 0; i < 3; i++) first.update([batch]);
    expect(Buffer.from(await first.digest())).toEqual(sha256(Buffer.concat([batch, batch, batch])));
    // The buffers come back in their own messages, before the digest's answer.
    const given = [...spareHashBuffers()];
    expect(given.length).toBeGreaterThanOrEqual(3);
    const second = createWorkerHash();
    const other = Buffer.alloc(1024 * 1024, 6);
    for (let i = 0; i < 3; i++) second.update([other]);
    // Taken from the spares: three fewer until the worker gives them back.
    expect(spareHashBuffers().length).toBe(given.length - 3);
    expect(Buffer.from(await second.digest())).toEqual(sha256(Buffer.concat([other, other, other])));
    expect(spareHashBuffers()).toHaveLength(given.length);
  });

  it("aborted and refused uploads release their hash in the worker", async () => {
    const wav = pcmWav(4 * 1024 * 1024 + 44);
    await expect(scanAudio({ source: streamOf(wav, { failAt: 2 * 1024 * 1024 }), mimeType: "audio/wav" })).rejects.toThrow("client went away");
    await expect(scanAudio({ source: streamOf(wav), mimeType: "audio/wav", maxBytes: 3 * 1024 * 1024 })).rejects.toMatchObject({ code: "FILE_TOO_LARGE" });
    await expect(scanAudio({ source: streamOf(Buffer.alloc(2 * 1024 * 1024, 9)), mimeType: "audio/wav" })).rejects.toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    expect(await workerHashCount()).toBe(0);
  });

  it("a worker crash fails the upload and the next upload succeeds", async () => {
    const wav = pcmWav(4 * 1024 * 1024 + 44);
    let sent = 0;
    const source = new Readable({
      read() {
        if (sent >= wav.length) return void this.push(null);
        // Crash the worker half-way through the upload, once some batches have gone to it.
        if (sent === 2 * 1024 * 1024) crashHashWorker();
        this.push(wav.subarray(sent, (sent += 64 * 1024)));
      },
    });
    await expect(scanAudio({ source, mimeType: "audio/wav" })).rejects.toMatchObject({ code: "INTERNAL" });
    const scan = await scanAudio({ source: streamOf(wav), mimeType: "audio/wav" });
    expect(scan.cid).toBe(rawCid(wav));
  });

  it("uploads under 2 MiB are hashed on the main thread, never waiting on the worker", async () => {
    const wav = pcmWav(2 * 1024 * 1024 - 2);
    // Were this upload sent to the worker, the crash would fail it.
    crashHashWorker();
    const scan = await scanAudio({ source: streamOf(wav), mimeType: "audio/wav" });
    expect(scan.cid).toBe(rawCid(wav));
  });

  it("the hash worker does not keep the process from exiting", () => {
    const script = `
      import { createWorkerHash } from ${JSON.stringify(join(import.meta.dirname, "sha256-worker.ts"))};
      const hash = createWorkerHash();
      hash.update([Buffer.from("x")]);
      hash.digest().then(() => console.log("hashed"));
    `;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000 });
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("hashed");
  });
});
