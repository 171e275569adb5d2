import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { pipeline } from "node:stream/promises";
import type { Deps } from "../deps";
import { DomainError } from "../domain-error";
import { createRouteHandler, errorResponse } from "../http/pipeline";
import type { RouteImpl } from "../http/route-call";
import type { HttpRequest, HttpResponse } from "../http/types";
import { localDidDocument } from "./local-did-document";
import { createRouteMatcher } from "./route-matcher";

/** Serves every route of the table over plain HTTP, with the same handlers the Lambdas run. */
export const createNodeHost = (impls: RouteImpl[], deps: Deps): Server => {
  const handlers = new Map(impls.map((impl) => [impl.route, createRouteHandler(impl, deps)]));
  const match = createRouteMatcher(impls.map((impl) => impl.route));

  return createServer(async (incoming, outgoing) => {
    const url = new URL(incoming.url ?? "/", "http://host");
    const method = (incoming.method ?? "GET").toUpperCase();
    let response: HttpResponse;
    try {
      const found = match(method, url.pathname);
      if (found) {
        response = await handlers.get(found.route)!(toHttpRequest(incoming, url, found.params));
      } else {
        response = localDidDocument(deps.config, method, url.pathname, incoming.headers.host) ?? notFound();
      }
    } catch (error) {
      response = errorResponse(error, randomUUID(), deps.logger);
    }
    // A request refused before its body was read (an oversized upload) cannot leave the connection reusable.
    if (!incoming.complete) response.headers.Connection = "close";
    await writeResponse(outgoing, response, method === "HEAD");
  });
};

const toHttpRequest = (incoming: IncomingMessage, url: URL, params: Record<string, string>): HttpRequest => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return {
    method: (incoming.method ?? "GET").toUpperCase(),
    path: url.pathname,
    headers,
    query: url.searchParams,
    params,
    sourceIp: incoming.socket.remoteAddress ?? "",
    body: () => incoming,
  };
};

const notFound = (): HttpResponse => {
  const requestId = randomUUID();
  const response = errorResponse(new DomainError("NOT_FOUND", "no such route"), requestId);
  response.headers["X-Request-ID"] = requestId;
  return response;
};

const writeResponse = async (out: ServerResponse, res: HttpResponse, head: boolean) => {
  const { body } = res;
  const headers = { ...res.headers };
  if (typeof body === "string" || body instanceof Uint8Array) headers["Content-Length"] ??= String(Buffer.byteLength(body));
  out.writeHead(res.status, headers);
  if (body === undefined || head) {
    if (body && typeof body === "object" && "destroy" in body) body.destroy();
    out.end();
    return;
  }
  if (typeof body === "string" || body instanceof Uint8Array) {
    out.end(body);
    return;
  }
  try {
    await pipeline(body, out);
  } catch {
    out.destroy(); // the client went away mid-stream, or the store failed after the headers were sent
  }
};
