/** Serves the rendition service over plain HTTP (the Node host of `npm run rendition`). */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { maxRequestBytes, type RenditionService } from "./rendition-service";

export function createRenditionHttpServer(handle: RenditionService): Server {
  // A caller that leaves before its body has arrived fails the read: there is no one to answer, and the process
  // serves on (an unhandled rejection here would end it).
  return createServer((incoming, outgoing) => void serve(handle, incoming, outgoing).catch(() => outgoing.destroy()));
}

async function serve(handle: RenditionService, incoming: IncomingMessage, outgoing: ServerResponse) {
  // The caller closed the connection before its answer was written.
  const gone = new AbortController();
  outgoing.once("close", () => outgoing.writableFinished || gone.abort(new Error("the caller closed the connection")));
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of incoming) {
    size += (chunk as Buffer).length;
    // Keep reading (and dropping) so the client gets the answer rather than a reset.
    if (size > maxRequestBytes + 1) tooLarge = true;
    else chunks.push(chunk as Buffer);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  const body = tooLarge ? "x".repeat(maxRequestBytes + 1) : Buffer.concat(chunks).toString("utf8");
  const response = await handle({ method: incoming.method ?? "GET", path: new URL(incoming.url ?? "/", "http://host").pathname, headers, body, signal: gone.signal });
  if (gone.signal.aborted) return;
  outgoing.writeHead(response.status, { ...response.headers, "Content-Length": String(Buffer.byteLength(response.body)) });
  outgoing.end(response.body);
}
