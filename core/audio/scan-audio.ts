/**
 * One streaming pass over an upload: count, hash, sniff, measure and (optionally) stage, reading each byte once.
 * The duration is measured from the bytes by a container walker that reads headers and skips payloads, so it
 * keeps up with the hash; nothing a header states about the length is believed.
 */
import { type Readable, Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DomainError } from "../domain-error";
import { type AcceptedMimeType, acceptedAudioTypes, isAcceptedMimeType, maxUploadBytes, unsupportedMimeTypeMessage } from "../records/accepted-types";
import { audioMeterFor } from "./duration/audio-meter-for";
import { rawCidOfDigest } from "../blobs/raw-cid";
import { createUploadHasher } from "../blobs/upload-hasher";
import { assertAudioFamily, sniffWindowBytes } from "./sniff-audio";
import { fileTooLarge } from "./file-too-large";

export interface AudioScan {
  cid: string;
  size: number;
  durationMs: number;
}

export interface ScanAudioOptions {
  source: Readable;
  /** The declared type; anything but one of the seven exact strings is UNSUPPORTED_MEDIA_TYPE before a byte is read. */
  mimeType: string;
  /** Where the bytes go as they pass (a staging write); they are discarded when absent. */
  sink?: NodeJS.WritableStream;
  maxBytes?: number;
}

/**
 * No accepted codec plays on less than 500 bits a second (Opus, the most frugal, needs 6 kb/s): a duration
 * the bytes could only hold below that rate is a forged structure, and it bounds every duration to the column.
 */
const maxMsPerByte = (8 * 1000) / 500;

export function assertAcceptedMimeType(mimeType: string): asserts mimeType is AcceptedMimeType {
  if (!isAcceptedMimeType(mimeType)) {
    throw new DomainError("UNSUPPORTED_MEDIA_TYPE", unsupportedMimeTypeMessage(mimeType));
  }
}

/**
 * Rejects as early as the bytes allow: a wrong type after the first 4100 bytes, an oversize upload at byte
 * maxBytes + 1 (the source is destroyed, so nothing more is read). The sink has every byte once this resolves.
 */
export async function scanAudio({ source, mimeType, sink, maxBytes = maxUploadBytes }: ScanAudioOptions): Promise<AudioScan> {
  try {
    assertAcceptedMimeType(mimeType);
  } catch (error) {
    source.destroy();
    throw error;
  }
  const hasher = createUploadHasher();
  const meter = audioMeterFor(acceptedAudioTypes[mimeType]);
  let count = 0;
  let head: Buffer[] | undefined = [];
  let headBytes = 0;

  const sniff = async () => {
    const bytes = Buffer.concat(head!);
    head = undefined;
    await assertAudioFamily(bytes.subarray(0, sniffWindowBytes), mimeType);
  };

  const pass = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      count += chunk.length;
      if (count > maxBytes) {
        callback(fileTooLarge(maxBytes));
        return;
      }
      hasher.update(chunk);
      meter.push(chunk);
      if (!head) return callback(null, chunk);
      head.push(chunk);
      headBytes += chunk.length;
      if (headBytes < sniffWindowBytes) return callback(null, chunk);
      sniff().then(() => callback(null, chunk), callback);
    },
    flush(callback) {
      if (head) sniff().then(() => callback(), callback);
      else callback();
    },
  });

  const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  let sha256;
  try {
    await pipeline(source, pass, sink ?? discard);
    sha256 = await hasher.digest();
  } finally {
    // A failed or aborted upload leaves no hash behind in the worker.
    hasher.release();
  }
  const measured = meter.finish(count);
  if ("refused" in measured) throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `declared ${mimeType} but ${measured.refused}`);
  if (measured.durationMs > count * maxMsPerByte) {
    throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `declared ${mimeType} but ${count} bytes cannot hold ${measured.durationMs} ms of audio`);
  }
  return { cid: rawCidOfDigest(sha256), size: count, durationMs: measured.durationMs };
}
