/**
 * Busboy reports a part's MIME type without its parameters (`audio/webm;codecs=opus` becomes `audio/webm`), but the
 * contract compares the part's Content-Type exactly. This tap reads the first part's raw header off the body bytes
 * as they reach busboy (a `data` listener ahead of busboy's, dropped once the header is seen: no stream of its own
 * for the whole body to pass through), so it has seen the header by the time busboy announces the part.
 */
// Part headers are capped at 16 KiB (read-multipart-file.ts); a preamble beyond this much is not worth scanning.
export const scanLimitBytes = 64 * 1024;

export interface ContentTypeTap {
  /** Looks at the body's next chunk; true once it needs no more (the header was seen, or the scan limit passed). */
  watch(chunk: Buffer): boolean;
  /** The first part's Content-Type header value as sent (trimmed), null when it has none, undefined when not yet seen. */
  contentType(): string | null | undefined;
  /** Where the first part's data starts in the body (just past its header's blank line); undefined when not yet seen. */
  dataStart(): number | undefined;
}

export function boundaryOf(contentType: string): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** The raw Content-Type of the first part in `head`, null if that part has none, undefined if its header is incomplete. */
export function firstPartContentType(head: Buffer, boundary: string): string | null | undefined {
  return firstPartHead(head, boundary)?.contentType;
}

/** The first part's raw Content-Type and the offset its data starts at, undefined while its header is incomplete. */
function firstPartHead(head: Buffer, boundary: string): { contentType: string | null; dataStart: number } | undefined {
  const text = head.toString("latin1");
  const delimiter = `--${boundary}`;
  const at = text.startsWith(delimiter) ? 0 : text.indexOf(`\r\n${delimiter}`);
  if (at < 0) return undefined;
  const lineEnd = text.indexOf("\r\n", at === 0 ? delimiter.length : at + 2 + delimiter.length);
  if (lineEnd < 0) return undefined;
  const headerEnd = text.indexOf("\r\n\r\n", lineEnd);
  const headers = headerEnd === lineEnd ? "" : headerEnd < 0 ? undefined : text.slice(lineEnd + 2, headerEnd);
  if (headers === undefined) return undefined;
  // The part's data follows the blank line that ends its header.
  const dataStart = headerEnd + 4;
  // A header folded over lines (a line break before a space or tab) is one value, as busboy reads it: unfolded, a
  // parameter on the next line still counts against the exact type.
  for (const line of headers.replace(/\r\n(?=[ \t])/g, "").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === "content-type") return { contentType: line.slice(colon + 1).trim(), dataStart };
  }
  return { contentType: null, dataStart };
}

export function tapFirstPartContentType(boundary: string): ContentTypeTap {
  let head: Buffer | undefined = Buffer.alloc(0);
  let found: ReturnType<typeof firstPartHead>;
  return {
    watch(chunk) {
      if (!head) return true;
      head = Buffer.concat([head, chunk]);
      found = firstPartHead(head, boundary);
      if (found !== undefined || head.length > scanLimitBytes) head = undefined;
      return head === undefined;
    },
    contentType: () => found?.contentType,
    dataStart: () => found?.dataStart,
  };
}
