import { DomainError, validationError } from "../domain-error";
import type { HttpRequest } from "../http-message/http-message";

/** JSON write bodies are capped at 256 KiB (413 beyond). */
export const JSON_BODY_LIMIT = 262_144;

/** Reads a JSON body, stopping as soon as it passes `maxBytes` (413) so an oversized body is never buffered whole. */
export const readJsonBody = async (req: HttpRequest, maxBytes: number): Promise<unknown> => {
  const type = req.headers["content-type"]?.split(";")[0]?.trim().toLowerCase();
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  // Stopping early leaves the rest of the body unread, not destroyed: destroying a Node host's request closes its
  // socket, and the 413 would never reach the client. The host reads and discards what is left (node-host.ts).
  for await (const chunk of req.body().iterator({ destroyOnReturn: false })) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  if (type !== "application/json") {
    throw validationError("Content-Type must be application/json", [{ path: ["headers", "Content-Type"], message: "expected application/json" }]);
  }
  let text: string;
  try {
    text = utf8.decode(Buffer.concat(chunks));
  } catch {
    // Decoded leniently, each bad byte would become U+FFFD: text other than the client sent, stored as if it had.
    throw validationError("request body is not valid UTF-8", [{ path: [], message: "invalid UTF-8" }]);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw validationError("request body is not valid JSON", [{ path: [], message: "invalid JSON" }]);
  }
};

// JSON is UTF-8 (RFC 8259); a byte order mark is kept, so JSON.parse refuses it as before.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const tooLarge = (maxBytes: number) => new DomainError("PAYLOAD_TOO_LARGE", `JSON body exceeds ${maxBytes} bytes`);
