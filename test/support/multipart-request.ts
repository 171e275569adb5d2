/** Multipart/form-data HttpRequests for upload tests, with a body that counts how much of it was read. */
import { Readable } from "node:stream";
import type { HttpRequest } from "../../core/http-message/http-message";

export interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | { size: number; fill?: number; head?: Buffer };
}

export interface TestRequest extends HttpRequest {
  /** Bytes of the body pulled so far. */
  bytesRead(): number;
  totalBytes: number;
}

const boundary = "----svc-test-boundary-7MA4YWxkTrZu0gW";
const chunkSize = 64 * 1024;

/**
 * Builds the body lazily, chunk by chunk, so a 25 MiB part costs no memory until read and a test can tell
 * how far the reader got.
 */
export function multipartRequest(parts: Part[], options: { contentType?: string } = {}): TestRequest {
  const segments: (Buffer | { size: number; fill: number; head?: Buffer })[] = [];
  for (const part of parts) {
    let header = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) header += `; filename="${part.filename}"`;
    header += "\r\n";
    if (part.contentType !== undefined) header += `Content-Type: ${part.contentType}\r\n`;
    segments.push(Buffer.from(`${header}\r\n`));
    segments.push(Buffer.isBuffer(part.data) ? part.data : { fill: 0, ...part.data });
    segments.push(Buffer.from("\r\n"));
  }
  segments.push(Buffer.from(`--${boundary}--\r\n`));
  const totalBytes = segments.reduce((n, s) => n + (Buffer.isBuffer(s) ? s.length : s.size), 0);

  let read = 0;
  function* chunks() {
    for (const segment of segments) {
      if (Buffer.isBuffer(segment)) {
        for (let at = 0; at < segment.length; at += chunkSize) yield segment.subarray(at, at + chunkSize);
        continue;
      }
      const head = segment.head ?? Buffer.alloc(0);
      for (let at = 0; at < head.length; at += chunkSize) yield head.subarray(at, Math.min(at + chunkSize, segment.size));
      for (let at = head.length; at < segment.size; at += chunkSize) yield Buffer.alloc(Math.min(chunkSize, segment.size - at), segment.fill);
    }
  }
  const iterator = chunks();
  const body = new Readable({
    highWaterMark: chunkSize,
    read() {
      const next = iterator.next();
      if (next.done) this.push(null);
      else {
        read += next.value.length;
        this.push(next.value);
      }
    },
  });

  return {
    method: "POST",
    path: "/api/v1/audio/upload",
    headers: { "content-type": options.contentType ?? `multipart/form-data; boundary=${boundary}` },
    query: new URLSearchParams(),
    params: {},
    sourceIp: "127.0.0.1",
    body: () => body,
    bytesRead: () => read,
    totalBytes,
  };
}
