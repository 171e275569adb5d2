import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { randomUUID } from "node:crypto";
import { pipeline } from "node:stream/promises";
import type { Deps } from "../../deps";
import { DomainError, validationError } from "../../domain-error";
import { createRouteHandler, errorResponse, logHostAnswer, refusedResponse, sentRequestId } from "../../http/pipeline";
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

/** The host's server, and its shutdown: done once every connection is closed and every request answered. */
export type NodeHost = Server & { shutDown(): Promise<void> };

/** Serves every route of the table over plain HTTP, with the same handlers the Lambdas run. */
export const createNodeHost = (impls: RouteImpl[], deps: Deps): NodeHost => {
  const handlers = new Map(impls.map((impl) => [impl.route, createRouteHandler(impl, deps)]));
  const match = createRouteMatcher(impls.map((impl) => impl.route));
  const { bodyMinBytesPerSecond, bodyRateWindowMs } = deps.config.timeouts;
  const floor: BodyRateFloor = { minBytesPerSecond: bodyMinBytesPerSecond, windowMs: bodyRateWindowMs };
  const noFloor: BodyRateFloor = { ...floor, minBytesPerSecond: 0 };

  /** An answer the host gives itself, before any route: the envelope, and the request's one log line. */
  const refuse = (error: DomainError, incoming: IncomingMessage, path: string | undefined): HttpResponse =>
    refusedResponse(deps.logger, requestIdOf(incoming), { method: incoming.method ?? "GET", path }, error);

  const serve = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const method = (incoming.method ?? "GET").toUpperCase();
    let response: HttpResponse;
    let request: HttpRequest | undefined;
    try {
      const target = parseRequestTarget(incoming.url);
      const found = target && match(method, target.pathname);
      if (!target) {
        response = refuse(new DomainError("VALIDATION_ERROR", "malformed request target"), incoming, originFormPath(incoming.url));
      } else if (incoming.httpVersion === "1.0" && incoming.headers["transfer-encoding"] !== undefined) {
        // RFC 9112 §6.1: HTTP/1.0 has no Transfer-Encoding, so the framing is faulty; the connection closes after
        // the answer, so nothing a proxy framed otherwise is read as the next request.
        response = refuse(validationError("Transfer-Encoding is not HTTP/1.0", [{ path: ["headers", "transfer-encoding"], message: "not in HTTP/1.0" }]), incoming, target.pathname);
        response.headers.Connection = "close";
      } else if (incoming.httpVersion === "1.1" && incoming.headers.host === undefined) {
        // RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without Host, with more than one, or with
        // a Host that is no host.
        response = refuse(validationError("the Host header is required", [{ path: ["headers", "host"], message: "Required" }]), incoming, target.pathname);
      } else if ((incoming.headersDistinct.host?.length ?? 0) > 1 || !validHost(incoming.headers.host)) {
        response = refuse(validationError("the Host header must be one host[:port]", [{ path: ["headers", "host"], message: "one host[:port]" }]), incoming, target.pathname);
      } else if (found) {
        // Uploads only: every other body is small and answered 503 at the request deadline anyway.
        request = toHttpRequest(incoming, target, found.params, found.route.body?.kind === "multipart" ? floor : noFloor);
        response = await handlers.get(found.route)!(request);
      } else {
        const did = localDidDocument(deps.config, method, target.pathname, incoming.headers.host);
        if (did) {
          const requestId = requestIdOf(incoming);
          response = { ...did, headers: { ...did.headers, "X-Request-ID": requestId } };
          logHostAnswer(deps.logger, requestId, { method, path: target.pathname, status: response.status });
        } else {
          response = refuse(new DomainError("NOT_FOUND", "no such route"), incoming, target.pathname);
        }
      }
    } catch (error) {
      // Route handlers answer their own failures; this is the host itself failing (reading the request).
      const requestId = randomUUID();
      deps.logger.error("request failed outside its route", { requestId }, error instanceof Error ? error : new Error(String(error)));
      response = errorResponse(classifyError(error).failure, requestId);
    }
    if (!incoming.complete) finishUnreadBody(incoming, response, request?.bodyTooSlow?.() ?? false);
    // Shutting down: a keep-alive client that keeps sending would hold its connection, and the shutdown, forever.
    if (closing) response.headers.Connection = "close";
    await writeResponse(outgoing, response, isHead(method), deps.logger);
  };

  // Nothing one request does may take the process down for every tenant: whatever escapes is logged and the
  // socket closed.
  // Node's own answer to an HTTP/1.1 request without Host is a bare 400; `serve` answers it in the envelope.
  const inFlight = new Set<Promise<void>>();
  let closing = false;
  const answer = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    // The idle timeout (below) is for a client that stalls, sending its request or reading its answer: once the
    // body is in and until the answer is written, the host is the one working (a worker route's pass runs minutes).
    outgoing.on("timeout", (socket: Socket) => {
      if (!incoming.complete || outgoing.headersSent) socket.destroy();
    });
    const served = serve(incoming, outgoing).catch((error: unknown) => {
      deps.logger.error("request failed outside the route pipeline", error instanceof Error ? error : new Error(String(error)));
      outgoing.destroy();
    });
    inFlight.add(served);
    void served.finally(() => inFlight.delete(served));
  };
  const server = createServer({ requireHostHeader: false }, answer);
  // An Expect the host does not know (only 100-continue is) is ignored, as RFC 9110 §10.1.1 allows, rather than
  // answered with Node's bare 417.
  server.on("checkExpectation", answer);
  // CONNECT names no route of ours: answered in the envelope, not with a dropped socket.
  server.on("connect", (incoming: IncomingMessage, socket: Duplex) => {
    // Its target is an authority (host:port), logged as the path, without any userinfo a client put before it.
    const response = refuse(new DomainError("NOT_FOUND", "no such route"), incoming, incoming.url?.replace(/^.*@/, "").slice(0, 1024));
    socket.end(rawResponse(response.status, String(response.body), response.headers["X-Request-ID"]!));
  });
  // A connection that sends nothing for this long is cut off; a stalled upload's stream then fails and its staging
  // file is removed, rather than held until Node's five-minute request timeout.
  const { idleMs } = deps.config.timeouts;
  server.timeout = idleMs;
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, deps));
  return Object.assign(server, {
    async shutDown() {
      closing = true;
      // close() ends the idle connections now and takes no new ones; a busy one ends after its answer (Connection:
      // close). One still open an idle timeout later (an answer read slowly, a long pass) is closed: its request
      // still runs to its end, only its answer is lost.
      const grace = setTimeout(() => server.closeAllConnections(), idleMs);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(grace);
      // Requests still being answered finish, their cleanup included (a cut-off upload removes its staging file).
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
  });
};

/** uri-host [":" port] (RFC 3986): a registered name, an IPv4 address or a bracketed IP literal; empty is allowed. */
const validHost = (host: string | undefined): boolean =>
  host === undefined || /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(:\d*)?$/.test(host);

/** A whole answer written to a socket by hand, in the envelope, with the date an origin server must send. */
const rawResponse = (status: number, body: string, requestId: string) =>
  `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nDate: ${new Date().toUTCString()}\r\nContent-Type: application/json; charset=utf-8\r\n` +
  `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${body}`;

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
  socket.end(rawResponse(400, JSON.stringify({ success: false, error: { message, code: "VALIDATION_ERROR" }, requestId }), requestId));
};

const toHttpRequest = (
  incoming: IncomingMessage,
  url: { pathname: string; query: URLSearchParams },
  params: Record<string, string>,
  floor: BodyRateFloor,
): HttpRequest => {
  // A repeated header reads as API Gateway delivers it, its values joined with "," (a cookie's with "; "): Node's own
  // `headers` keeps only the first Authorization or Content-Type, so the two hosts would answer one request two ways.
  // A joined acting actor holds a comma, which authenticate refuses on either host. Content-Length is never repeated
  // here: Node's parser refuses a second one, equal or not.
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(incoming.headersDistinct)) {
    if (values !== undefined) headers[name] = utf8HeaderValue(values.join(name === "cookie" ? "; " : ","));
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

/** The path of a target that did not parse, when it is origin-form (`/...`): an absolute-form one may carry credentials. */
const originFormPath = (target: string | undefined): string | undefined =>
  target?.startsWith("/") ? target.split("?", 1)[0]!.slice(0, 1024) : undefined;

/** The client's request id when it sent a UUID, else a fresh one. */
const requestIdOf = (incoming?: IncomingMessage): string => {
  const sent = incoming?.headers["x-request-id"];
  return sentRequestId(typeof sent === "string" ? sent : undefined) ?? randomUUID();
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
