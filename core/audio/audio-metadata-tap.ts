/** Reads duration and track kinds with music-metadata from a tee of the upload stream, never a second read. */
import { PassThrough } from "node:stream";
import { parseStream } from "music-metadata";
import { DomainError } from "../domain-error";

export interface AudioFacts {
  durationMs: number | null;
}

export interface MetadataTap {
  /** Hands the parser a chunk; resolves when it may take the next one (backpressure), at once once it has finished. */
  feed(chunk: Buffer): Promise<void>;
  end(): void;
  abort(): void;
  /** Settles after `end`: the facts, or UNSUPPORTED_MEDIA_TYPE when the bytes do not parse as audio-only media. */
  result(): Promise<AudioFacts>;
}

export function tapAudioMetadata(mimeType: string, size?: number): MetadataTap {
  const tee = new PassThrough();
  // The parser may close the tee once it has what it needs; later writes must not become unhandled errors.
  tee.on("error", () => undefined);
  let settled = false;
  const parsed = parseStream(tee, size === undefined ? { mimeType } : { mimeType, size }, { duration: true, skipCovers: true }).then(
    (metadata) => ({ metadata, error: undefined }),
    (error: unknown) => ({ metadata: undefined, error }),
  );
  const done = parsed.then(() => {
    settled = true;
    // Formats whose header states the duration (WAV) finish early: stop buffering the rest.
    tee.destroy();
  });

  return {
    async feed(chunk) {
      if (settled || tee.destroyed) return;
      if (tee.write(chunk)) return;
      await Promise.race([new Promise((resolve) => tee.once("drain", resolve)), done]);
    },
    end() {
      if (!settled && !tee.destroyed) tee.end();
    },
    abort() {
      tee.destroy();
    },
    async result() {
      const { metadata, error } = await parsed;
      if (!metadata) {
        throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `the bytes do not parse as ${mimeType}: ${(error as Error)?.message ?? "unknown"}`);
      }
      if (metadata.format.hasVideo) throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `declared ${mimeType} but the file contains video`);
      // A container with no codec and no sample rate found is a header with nothing playable behind it.
      const { hasAudio, codec, sampleRate } = metadata.format;
      if (hasAudio === false || (codec === undefined && sampleRate === undefined)) {
        throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `declared ${mimeType} but no audio stream was found`);
      }
      const seconds = metadata.format.duration;
      return { durationMs: seconds !== undefined && Number.isFinite(seconds) ? Math.round(seconds * 1000) : null };
    },
  };
}
