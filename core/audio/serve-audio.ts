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
  /** The request's If-None-Match header. */
  ifNoneMatch?: string;
  /** The request's If-Range header: the Range holds only while it names these bytes. */
  ifRange?: string;
  method: string;
  /** Expiry of the playback signature (unix seconds): nothing handed out may outlive it. */
  exp: number;
  now: Date;
}

/** Whether an If-None-Match value names `etag` (weak comparison, as RFC 9110 13.1.2 asks), or is `*`. */
export function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

export async function serveAudio({ store, key, mimeType, etag, range, ifNoneMatch, ifRange, method, exp, now }: ServeAudioOptions): Promise<HttpResponse> {
  const remaining = Math.max(1, exp - unixSeconds(now));
  const found = await store.stat(key);
  if (!found) throw new DomainError("NOT_FOUND", "audio not found");
  // The bytes at an address never change, and the signed URL names them until it expires: cache them that long,
  // and revalidate by the tag. The S3 redirect is cached the same way, so its presigned GET lives as long, and S3's
  // answer to it expires at the signature's end however late a cached redirect is followed.
  const caching = { "Cache-Control": `private, max-age=${remaining}`, ETag: etag };
  if (ifNoneMatch !== undefined && matchesEtag(ifNoneMatch, etag)) return { status: 304, headers: caching };

  if (store.kind === "s3") {
    const location = await store.presignRead(key, {
      expiresIn: remaining,
      method: method === "HEAD" ? "HEAD" : "GET",
      contentType: mimeType,
      cacheUntil: new Date(exp * 1000),
      signingDate: now,
    });
    return { status: 302, headers: { Location: location, ...caching } };
  }

  const size = found.size;
  const headers: Record<string, string> = {
    "Content-Type": mimeType,
    "Accept-Ranges": "bytes",
    ...caching,
    "X-Content-Type-Options": "nosniff",
  };
  // RFC 9110 13.1.5: a Range under an If-Range that does not name these bytes (strong comparison; a date never
  // matches, as no Last-Modified is sent) is ignored, and the whole file answered.
  const wanted = parseRange(ifRange === undefined || ifRange.trim() === etag ? range : undefined, size);
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
