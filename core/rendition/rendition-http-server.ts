/** Serves the rendition service over plain HTTP (the Node host of `npm run rendition`). */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { maxRequestBytes, type RenditionService } from "./rendition-service";

/** The most of a body read and dropped: a request is a few KB of JSON; only a caller that is not ours sends more. */
export const maxReadBytes = 64 * 1024;

export function createRenditionHttpServer(handle: RenditionService): Server {
  // A caller that leaves before its body has arrived fails the read: there is no one to answer, and the process
  // serves on (an unhandled rejection here would end it).
  const server: Server = createServer((incoming, outgoing) => void serve(handle, incoming, outgoing, () => !server.listening).catch(() => outgoing.destroy()));
  return server;
}

async function serve(handle: RenditionService, incoming: IncomingMessage, outgoing: ServerResponse, closing: () => boolean) {
  // The caller closed the connection before its answer was written.
  const gone = new AbortController();
  outgoing.once("close", () => outgoing.writableFinished || gone.abort(new Error("the caller closed the connection")));
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of incoming) {
    size += (chunk as Buffer).length;
    // Keep reading (and dropping) so the client gets the answer rather than a reset, up to a point.
    if (size > maxRequestBytes + 1) tooLarge = true;
    else chunks.push(chunk as Buffer);
    // Leaving the loop destroys the request and its connection: the caller, unanswered, is no longer read for up
    // to Node's five-minute request timeout, token or not. Its refusal is still logged (handle, below).
    if (size > maxReadBytes) break;
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  const body = tooLarge ? "x".repeat(maxRequestBytes + 1) : Buffer.concat(chunks).toString("utf8");
  const response = await handle({ method: incoming.method ?? "GET", path: new URL(incoming.url ?? "/", "http://host").pathname, headers, body, signal: gone.signal });
  if (gone.signal.aborted) return;
  // Once the server is closing (it no longer listens), a keep-alive caller's connection ends after this answer:
  // one that keeps calling would otherwise hold the shutdown forever.
  const connection = closing() ? { Connection: "close" } : {};
  outgoing.writeHead(response.status, { ...response.headers, ...connection, "Content-Length": String(Buffer.byteLength(response.body)) });
  outgoing.end(response.body);
}
