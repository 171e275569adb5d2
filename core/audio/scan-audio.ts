/** One streaming pass over an upload: count, hash, sniff, measure and (optionally) stage, reading each byte once. */
import { type Readable, Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DomainError } from "../domain-error";
import { type AcceptedMimeType, isAcceptedMimeType, maxUploadBytes } from "./accepted-types";
import { tapAudioMetadata } from "./audio-metadata-tap";
import { createRawCidHasher } from "./raw-cid";
import { assertAudioFamily, sniffWindowBytes } from "./sniff-audio";
import { fileTooLarge } from "./file-too-large";

export interface AudioScan {
  cid: string;
  size: number;
  durationMs: number | null;
}

export interface ScanAudioOptions {
  source: Readable;
  /** The declared type; anything but one of the seven exact strings is UNSUPPORTED_MEDIA_TYPE before a byte is read. */
  mimeType: string;
  /** Where the bytes go as they pass (a staging write); they are discarded when absent. */
  sink?: NodeJS.WritableStream;
  maxBytes?: number;
  /** The size when known in advance (a staged S3 object): helps the duration estimate of some MP3s. */
  size?: number;
}

export function assertAcceptedMimeType(mimeType: string): asserts mimeType is AcceptedMimeType {
  if (!isAcceptedMimeType(mimeType)) {
    throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `unsupported media type ${JSON.stringify(mimeType)}: send one of the accepted audio types exactly`);
  }
}

/**
 * Rejects as early as the bytes allow: a wrong type after the first 4100 bytes, an oversize upload at byte
 * maxBytes + 1 (the source is destroyed, so nothing more is read). The sink has every byte once this resolves.
 */
export async function scanAudio({ source, mimeType, sink, maxBytes = maxUploadBytes, size }: ScanAudioOptions): Promise<AudioScan> {
  try {
    assertAcceptedMimeType(mimeType);
  } catch (error) {
    source.destroy();
    throw error;
  }
  const hasher = createRawCidHasher();
  const metadata = tapAudioMetadata(mimeType, size);
  let count = 0;
  let head: Buffer[] | undefined = [];
  let headBytes = 0;

  const sniff = async () => {
    const bytes = Buffer.concat(head!);
    head = undefined;
    await assertAudioFamily(bytes.subarray(0, sniffWindowBytes), mimeType);
  };

  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      count += chunk.length;
      if (count > maxBytes) {
        callback(fileTooLarge(maxBytes));
        return;
      }
      hasher.update(chunk);
      const step = async () => {
        if (head) {
          head.push(chunk);
          headBytes += chunk.length;
          if (headBytes >= sniffWindowBytes) await sniff();
        }
        await metadata.feed(chunk);
      };
      step().then(() => callback(null, chunk), callback);
    },
    flush(callback) {
      const finish = async () => {
        if (head) await sniff();
        metadata.end();
      };
      finish().then(() => callback(), callback);
    },
  });

  const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  try {
    await pipeline(source, meter, sink ?? discard);
  } catch (error) {
    metadata.abort();
    throw error;
  }
  const facts = await metadata.result();
  return { cid: hasher.cid(), size: count, durationMs: facts.durationMs };
}
