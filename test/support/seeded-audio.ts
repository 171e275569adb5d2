import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { rawCid } from "../../core/blobs/raw-cid";
import { blobKey } from "../../core/blobs/blob-key";
import type { BlobStore } from "../../core/blobs/blob-store";
import type { Sql } from "../../core/sql/port";

/** A short mono 16-bit WAV of random noise: unique bytes, so every call gets its own CID. */
export const noiseWav = (ms = 500, rate = 8000): Buffer => {
  const samples = Math.round((rate * ms) / 1000);
  const data = randomBytes(samples * 2);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
};

/**
 * Stores audio as an upload of `appId` would (bytes at their content address, and the blob row), without the
 * upload route and its rate limit; returns the blob reference a create places verbatim.
 */
export const seedAudio = async (ports: { sql: Sql; blobs: BlobStore }, appId: string, bytes = noiseWav(), durationMs = 500) => {
  const cid = rawCid(bytes);
  await ports.blobs.writeAtomic(blobKey(appId, cid), Readable.from([bytes]), { contentType: "audio/wav" });
  await ports.sql.query(
    `INSERT INTO blobs (app_id, cid, mime_type, size, duration_ms) VALUES ($1, $2, 'audio/wav', $3, $4) ON CONFLICT DO NOTHING`,
    [appId, cid, bytes.length, durationMs],
  );
  return { $type: "blob" as const, ref: { $link: cid }, mimeType: "audio/wav" as const, size: bytes.length };
};

export const audioPost = (blob: Awaited<ReturnType<typeof seedAudio>>, processing?: Record<string, boolean>) => ({
  text: "with audio",
  embed: { $type: "dev.svc.embed.audio", audio: blob },
  ...(processing && { processing }),
});
