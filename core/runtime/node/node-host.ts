import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { randomUUID } from "node:crypto";
import { pipeline } from "node:stream/promises";
import type { Deps } from "../../deps";
import { DomainError, validationError } from "../../domain-error";
import { createRouteHandler, errorResponse, sentRequestId } from "../../http/pipeline";
import { classifyError } from "../../invocation/classify-error";
import { isHead } from "../../http/route";
import type { RouteImpl } from "../../http/route-call";
import type { HttpRequest, HttpResponse } from "../../http-message/http-message";
import { maxUploadBytes } from "../../records/accepted-types";
import type { Logger } from "../../observability/logger";
import { localDidDocument } from "./local-did-document";
import { createRouteMatcher } from "./route-matcher";
import { parseRequestTarget } from "./request-target";
import { bodyWithRateFloor, type BodyRateFloor } from "./body-rate-floor";

/** Serves every route of the table over plain HTTP, with the same handlers the Lambdas run. */
export const createNodeHost = (impls: RouteImpl[], deps: Deps): Server => {
  const handlers = new Map(impls.map((impl) => [impl.route, createRouteHandler(impl, deps)]));
  const match = createRouteMatcher(impls.map((impl) => impl.route));
  const { bodyMinBytesPerSecond, bodyRateWindowMs } = deps.config.timeouts;
  const floor: BodyRateFloor = { minBytesPerSecond: bodyMinBytesPerSecond, windowMs: bodyRateWindowMs };
  const noFloor: BodyRateFloor = { ...floor, minBytesPerSecond: 0 };

  const serve = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const method = (incoming.method ?? "GET").toUpperCase();
    let response: HttpResponse;
    let request: HttpRequest | undefined;
    try {
      const target = parseRequestTarget(incoming.url);
      const found = target && match(method, target.pathname);
      const repeated = repeatedIdentityHeader(incoming);
      if (!target) {
        response = withRequestId(new DomainError("VALIDATION_ERROR", "malformed request target"), incoming);
      } else if (incoming.httpVersion === "1.1" && incoming.headers.host === undefined) {
        // RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without Host.
        response = withRequestId(validationError("the Host header is required", [{ path: ["headers", "host"], message: "Required" }]), incoming);
      } else if (repeated) {
        response = withRequestId(validationError(`${repeated} was sent more than once`, [{ path: ["headers", repeated], message: "sent more than once" }]), incoming);
      } else if (found) {
        // Uploads only: every other body is small and answered 503 at the request deadline anyway.
        request = toHttpRequest(incoming, target, found.params, found.route.body?.kind === "multipart" ? floor : noFloor);
        response = await handlers.get(found.route)!(request);
      } else {
        response = localDidDocument(deps.config, method, target.pathname, incoming.headers.host) ?? withRequestId(new DomainError("NOT_FOUND", "no such route"), incoming);
      }
    } catch (error) {
      // Route handlers answer their own failures; this is the host itself failing (reading the request).
      const requestId = randomUUID();
      deps.logger.error("request failed outside its route", { requestId }, error instanceof Error ? error : new Error(String(error)));
      response = errorResponse(classifyError(error).failure, requestId);
    }
    if (!incoming.complete) finishUnreadBody(incoming, response, request?.bodyTooSlow?.() ?? false);
    await writeResponse(outgoing, response, isHead(method), deps.logger);
  };

  // Nothing one request does may take the process down for every tenant: whatever escapes is logged and the
  // socket closed.
  // Node's own answer to an HTTP/1.1 request without Host is a bare 400; `serve` answers it in the envelope.
  const server = createServer({ requireHostHeader: false }, (incoming, outgoing) => {
    serve(incoming, outgoing).catch((error: unknown) => {
      deps.logger.error("request failed outside the route pipeline", error instanceof Error ? error : new Error(String(error)));
      outgoing.destroy();
    });
  });
  // A connection that sends nothing for this long is cut off; a stalled upload's stream then fails and its staging
  // file is removed, rather than held until Node's five-minute request timeout.
  server.timeout = deps.config.timeouts.idleMs;
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, deps));
  return server;
};

/**
 * Requests Node refuses before any route sees them (malformed framing, headers over its limit, a request not
 * received in time) still get the envelope and an X-Request-ID, when the socket can still carry an answer.
 */
const answerClientError = (error: NodeJS.ErrnoException, socket: Duplex, deps: Deps) => {
  const requestId = randomUUID();
  deps.logger.info("request refused by the HTTP parser", { requestId, code: error.code, reason: error.message });
  if (!socket.writable || error.code === "ECONNRESET" || (socket as Socket).bytesWritten > 0) {
    socket.destroy();
    return;
  }
  const message =
    error.code === "HPE_HEADER_OVERFLOW"
      ? "request headers are too large"
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "the request was not received in time"
        : "malformed HTTP request";
  // VALIDATION_ERROR is a 400 in the closed set of codes, whatever Node would have said (431, 408): a client reads
  // one status per code.
  const status = 400;
  const body = JSON.stringify({ success: false, error: { message, code: "VALIDATION_ERROR" }, requestId });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
};

const toHttpRequest = (
  incoming: IncomingMessage,
  url: { pathname: string; query: URLSearchParams },
  params: Record<string, string>,
  floor: BodyRateFloor,
): HttpRequest => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) headers[name] = utf8HeaderValue(Array.isArray(value) ? value.join(", ") : value);
  }
  return {
    method: (incoming.method ?? "GET").toUpperCase(),
    path: url.pathname,
    headers,
    query: url.query,
    params,
    sourceIp: incoming.socket.remoteAddress ?? "",
    ...bodyWithRateFloor(incoming, floor),
    // The socket closed under a body still arriving: the client disconnected (or the idle timeout cut it off).
    clientClosed: () => incoming.socket.destroyed && !incoming.complete,
  };
};

/**
 * Who acts is one header each: Node joins a repeated one with ", ", which would read as a new identity ("alice, bob")
 * rather than the caller bug it is. (API Gateway joins them too, with ",", and nothing in the event tells them apart.)
 */
const identityHeaders = ["X-Svc-Acting-Actor", "X-Svc-Acting-Actor-Did"];
const repeatedIdentityHeader = (incoming: IncomingMessage): string | undefined =>
  identityHeaders.find((name) => (incoming.headersDistinct[name.toLowerCase()]?.length ?? 0) > 1);

/** The most of an unread request body the host reads (and discards) so its client can read an early answer. */
const maxDrainBytes = maxUploadBytes + 1024 * 1024;

/**
 * A request answered before its body was read (a 401 or 429 before an upload's bytes): closing the connection at
 * once would reset it under a client that is still sending, which then never reads the answer. So the rest of the
 * body is read and discarded, and the connection stays usable; a body beyond the upload limit is cut off instead.
 */
const finishUnreadBody = (incoming: IncomingMessage, response: HttpResponse, tooSlow: boolean) => {
  const declared = Number(incoming.headers["content-length"]);
  // Whatever the route piped the body into is done with it: the rest is drained here, or the connection closed.
  incoming.unpipe();
  if (tooSlow || incoming.destroyed || (Number.isFinite(declared) && declared > maxDrainBytes)) {
    response.headers.Connection = "close";
    return;
  }
  let drained = 0;
  incoming.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxDrainBytes) incoming.socket.destroy();
  });
  incoming.resume();
};

/**
 * Node hands header bytes over as latin1; header values are UTF-8 here (as API Gateway delivers them), so bytes
 * beyond ASCII are decoded as such. Bytes that are not UTF-8 become U+FFFD, which validation refuses where it matters.
 */
const utf8HeaderValue = (value: string): string =>
  /[^\x00-\x7f]/.test(value) ? Buffer.from(value, "latin1").toString("utf8") : value;

/** An answer the host gives itself, outside any route: still the envelope with its request id (the client's, if it sent one). */
const withRequestId = (error: DomainError, incoming?: IncomingMessage): HttpResponse => {
  const sent = incoming?.headers["x-request-id"];
  const requestId = sentRequestId(typeof sent === "string" ? sent : undefined) ?? randomUUID();
  return errorResponse(error, requestId);
};

const writeResponse = async (out: ServerResponse, res: HttpResponse, head: boolean, log: Pick<Logger, "info" | "warn">) => {
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
  // Which side gave out first: pipeline then destroys the other with an error of its own.
  let first: "client" | "body" | undefined;
  out.once("close", () => (first ??= "client"));
  body.once("error", () => (first ??= "body"));
  try {
    await pipeline(body, out);
  } catch (error) {
    // Nothing is left to answer either way. A client closing the connection is routine (a player seeks or stops;
    // one that has read every byte may close before the store's stream has ended here), so it is no warning; a
    // body that failed after the headers were sent (the store, the rendition service) is one.
    const fields = { requestId: res.headers["X-Request-ID"], error: String(error) };
    if (first === "client") log.info("client closed the connection before the response ended", fields);
    else log.warn("response stream failed", fields);
    out.destroy();
  }
};
