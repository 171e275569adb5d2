import { Readable } from "node:stream";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import { type DomainError, validationError } from "../domain-error";
import type { Deps } from "../deps";
import { DeadlinePassed, invocationDeadlineMs, withinDeadline } from "../deadline/deadline";
import { runInvocation } from "../invocation/run-invocation";
import { clientIp } from "../rate-limit/client-ip";
import { errorStatus } from "./errors";
import { authenticate } from "./middleware/authenticate";
import { idempotency } from "./middleware/idempotency";
import { parseInput } from "./middleware/parse-input";
import { proveCustody } from "./middleware/prove-custody";
import { rateLimit } from "./middleware/rate-limit";
import { successBody, type Outcome } from "./outcome";
import type { RouteCall, RouteImpl } from "./route-call";
import type { HttpRequest, HttpResponse } from "../http-message/http-message";
import type { SqlBackend } from "../sql/port";
import { invocationLogger, type Logger } from "../observability/logger";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request id a client sent (`X-Request-ID`), when it is a UUID: echoed back, never made up anew. */
export const sentRequestId = (sent: string | undefined): string | undefined => (sent && UUID.test(sent) ? sent : undefined);

/**
 * One route's request handling, the same on every runtime: the invocation pipeline (correlation id, counted SQL,
 * error classification, one log line) around a Middy chain of policy middlewares (in this order: authenticate,
 * prove custody, parse input, idempotency, rate limit) around the route's implementation, answered in the envelope.
 */
export const createRouteHandler = (impl: RouteImpl, deps: Deps) => {
  const chain = middy<RouteCall, Outcome, Error, Context>(async (call: RouteCall): Promise<Outcome> => {
    const reply = await impl.run(call);
    if ("raw" in reply) return { kind: "raw", response: reply.raw };
    return { kind: "json", status: reply.status ?? impl.route.status, body: successBody(reply.data), headers: reply.headers ?? {} };
  })
    .use(authenticate())
    .use(proveCustody())
    .use(parseInput())
    // Before the limiter: a replay of a stored answer costs no write (it takes a read), so a correct retry after a
    // burst gets its answer rather than a 429. A fresh claim that the limiter then refuses is released by
    // idempotency's onError.
    .use(idempotency())
    .use(rateLimit());
  // Only the Data API adapter reads the deadline (its wake-up retries stop in time to answer 503).
  const publishDeadline = (deps.sql as Partial<SqlBackend> | undefined)?.kind === "rds-data";

  return (req: HttpRequest, context?: Context): Promise<HttpResponse> => {
    const sent = req.headers["x-request-id"];
    const fields = { method: req.method, path: req.path, route: impl.route.file };
    const options = { name: impl.route.file, deps, requestId: sentRequestId(sent), fields, message: "request" };
    return runInvocation(options, async (invocation) => {
      const { requestId, log, sql } = invocation;
      const call: RouteCall = {
        route: impl.route,
        req,
        deps,
        requestId,
        log,
        sql,
        clientIp: clientIp(req, { source: deps.config.clientIpSource, trustedProxyHops: deps.config.trustedProxyHops }),
        body: undefined,
        query: undefined,
        params: { ...req.params },
        responseHeaders: {},
      };
      // Uploads stream their body from the client for as long as it takes on the Node host (their idle timeout bounds
      // a stall), and the worker route runs its pass to the pass's own limit; every other request, and any request on
      // Lambda, answers 503 once its deadline passes.
      const unbounded = (impl.route.body?.kind === "multipart" || impl.route.runsAPass === true) && !context;
      const configured = unbounded ? undefined : deps.config.timeouts?.requestDeadlineMs;
      const deadlineMs = invocationDeadlineMs(configured, context?.getRemainingTimeInMillis?.());
      let response: HttpResponse;
      let running: Promise<Outcome> | undefined;
      try {
        response = toHttpResponse(await withinDeadline(deadlineMs, () => (running = chain(call, context ?? ({} as Context))), { publish: publishDeadline }));
      } catch (error) {
        if (error instanceof DeadlinePassed) void running?.then(closeLateBody, () => undefined);
        // A client that disconnected mid-body is not an outage: 499 (client closed request) at info, no envelope
        // (nobody is there to read it).
        if (req.bodyTooSlow?.()) {
          // Not the route's failure but the client's pace, answered as the request's fault: VALIDATION_ERROR, a 400.
          const failure = invocation.failed(validationError("the request body arrived too slowly; send it faster or in one go"));
          response = errorResponse(failure, requestId);
        } else if (req.clientClosed?.()) {
          log.info("client closed the request", { reason: error instanceof Error ? error.message : String(error) });
          response = { status: clientClosedRequest, headers: {} };
        } else {
          if (error instanceof DeadlinePassed) await releaseHeldKey(call);
          response = errorResponse(invocation.failed(error), requestId);
        }
      }
      Object.assign(response.headers, call.responseHeaders, { "X-Request-ID": requestId });
      invocation.annotate({ status: response.status, appId: call.tenant?.appId });
      return response;
    });
  };
};

/** A late answer nobody reads (the 503 went out instead) still holds what it opened: a file's stream is closed. */
const closeLateBody = (late: Outcome): void => {
  const body = late.kind === "raw" ? late.response.body : undefined;
  if (body instanceof Readable) body.destroy();
};

/** How long a deadline's 503 waits for its key's release; a Lambda answers with at most a second to spare. */
const releaseWaitMs = 500;

/**
 * A 503 at the deadline is a failed first request to its client, which retries under the same key: the key is freed
 * with the answer, as any failure's is, or that retry would be a 409. Still running, the request's write is fenced by
 * the key (heldIdempotencyClause): released before it, the write stores nothing; committing, it holds the key's row,
 * and the release then finds it answered and frees nothing, so the retry replays it. Never a second post.
 */
const releaseHeldKey = async ({ releaseIdempotencyKey }: RouteCall): Promise<void> => {
  // Past the wait (a database too slow to answer), the key's lease frees it.
  if (releaseIdempotencyKey) await withinDeadline(releaseWaitMs, releaseIdempotencyKey, { publish: false }).catch(() => undefined);
};

const toHttpResponse = (outcome: Outcome): HttpResponse =>
  outcome.kind === "raw"
    ? outcome.response
    : { status: outcome.status, headers: { ...outcome.headers, ...jsonHeaders }, body: JSON.stringify(outcome.body) };

/** nginx's status for a request whose client closed the connection before the answer. */
const clientClosedRequest = 499;

const jsonHeaders = { "Content-Type": "application/json; charset=utf-8" };

/** The failure envelope, from a classified failure (never a stack trace), with its request id in `X-Request-ID` too. */
export const errorResponse = (failure: DomainError, requestId: string): HttpResponse => {
  const body = {
    success: false,
    error: { message: failure.message, code: failure.code, ...(failure.issues ? { issues: failure.issues } : {}) },
    requestId,
  };
  return { status: errorStatus[failure.code], headers: { ...jsonHeaders, "X-Request-ID": requestId }, body: JSON.stringify(body) };
};

/**
 * The one `request` line of a request a host answers itself, before any route, as a routed request's: its request
 * id, method, path, status and errorCode; never a header value.
 */
export const logHostAnswer = (logger: Logger, requestId: string, fields: { method: string; path: string | undefined; status: number; errorCode?: string }): void =>
  invocationLogger(logger, requestId).info("request", fields);

/** A host's refusal before any route (a malformed target or Host, an unknown path): the envelope, and its line. */
export const refusedResponse = (logger: Logger, requestId: string, request: { method: string; path: string | undefined }, failure: DomainError): HttpResponse => {
  const response = errorResponse(failure, requestId);
  logHostAnswer(logger, requestId, { method: request.method.toUpperCase(), path: request.path, status: response.status, errorCode: failure.code });
  return response;
};
