/** Answers a verified playback request: bytes with ranges from the file store, a 302 to a presigned GET from S3. */
import type { BlobStore } from "../blobs/blob-store";
import { DomainError } from "../domain-error";
import type { HttpResponse } from "../http-message/http-message";
import { parseRange } from "./byte-range";
import { unixSeconds } from "./playback-url";

export interface ServeAudioOptions {
  store: BlobStore;
  key: string;
  mimeType: string;
  /** Quoted entity tag, e.g. `"<cid>"`. */
  etag: string;
  /** The request's Range header. */
  range?: string;
  method: string;
  /** Expiry of the playback signature (unix seconds): nothing handed out may outlive it. */
  exp: number;
  now: Date;
}

/** A presigned S3 URL lives at most this long, and never past the playback signature. */
const maxPresignSeconds = 3600;

export async function serveAudio({ store, key, mimeType, etag, range, method, exp, now }: ServeAudioOptions): Promise<HttpResponse> {
  const remaining = Math.max(1, exp - unixSeconds(now));
  const found = await store.stat(key);
  if (!found) throw new DomainError("NOT_FOUND", "audio not found");

  if (store.kind === "s3") {
    const expiresIn = Math.max(1, Math.min(remaining, maxPresignSeconds));
    const location = await store.presignRead(key, {
      expiresIn,
      method: method === "HEAD" ? "HEAD" : "GET",
      contentType: mimeType,
      cacheControl: `private, max-age=${expiresIn}`,
      signingDate: now,
    });
    return { status: 302, headers: { Location: location, "Cache-Control": "no-store" } };
  }

  const size = found.size;
  const headers: Record<string, string> = {
    "Content-Type": mimeType,
    "Accept-Ranges": "bytes",
    "Cache-Control": `private, max-age=${remaining}`,
    ETag: etag,
    "X-Content-Type-Options": "nosniff",
  };
  const wanted = parseRange(range, size);
  if (wanted.kind === "unsatisfiable") {
    // 416 is not one of the contract's error codes, so it is a bare status like any file server's, not an envelope.
    return {
      status: 416,
      headers: { "Accept-Ranges": "bytes", "Content-Range": `bytes */${size}`, "Content-Length": "0", "Cache-Control": "no-store" },
    };
  }
  const part = wanted.kind === "partial" ? { start: wanted.start, end: wanted.end } : undefined;
  if (part) headers["Content-Range"] = `bytes ${part.start}-${part.end}/${size}`;
  headers["Content-Length"] = String(part ? part.end - part.start + 1 : size);
  const status = part ? 206 : 200;
  if (method === "HEAD") return { status, headers };

  // An empty file has no byte 0 to read; everything else streams straight from the store.
  if (size === 0) return { status, headers, body: new Uint8Array(0) };
  const opened = await store.read(key, part);
  if (!opened) throw new DomainError("NOT_FOUND", "audio not found");
  return { status, headers, body: opened.stream };
}
