import { randomUUID } from "node:crypto";
import middy from "@middy/core";
import type { Context } from "aws-lambda";
import type { Deps } from "../deps";
import { requestLogger } from "../observability/logger";
import { clientIp } from "../rate-limit/client-ip";
import { countStatements } from "../sql/count-statements";
import { isDependencyUnavailable } from "./dependency-unavailable";
import { DomainError } from "../domain-error";
import { errorStatus } from "./errors";
import { authenticate } from "./middleware/authenticate";
import { idempotency } from "./middleware/idempotency";
import { parseInput } from "./middleware/parse-input";
import { proveCustody } from "./middleware/prove-custody";
import { rateLimit } from "./middleware/rate-limit";
import { successBody, type Outcome } from "./outcome";
import type { RouteCall, RouteImpl } from "./route-call";
import type { HttpRequest, HttpResponse } from "./types";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One route's request handling, the same on every runtime: a Middy chain of policy middlewares (in this order:
 * authenticate, prove custody, rate limit, parse input, idempotency) around the route's implementation, with the
 * request id, error envelope and request log line wrapped around it.
 */
export const createRouteHandler = (impl: RouteImpl, deps: Deps) => {
  const chain = middy<RouteCall, Outcome, Error, Context>(async (call: RouteCall): Promise<Outcome> => {
    const reply = await impl.run(call);
    if ("raw" in reply) return { kind: "raw", response: reply.raw };
    return { kind: "json", status: reply.status ?? impl.route.status, body: successBody(reply.data), headers: reply.headers ?? {} };
  })
    .use(authenticate())
    .use(proveCustody())
    .use(rateLimit())
    .use(parseInput())
    .use(idempotency());

  return async (req: HttpRequest, context?: Context): Promise<HttpResponse> => {
    const started = performance.now();
    const sent = req.headers["x-request-id"];
    const requestId = sent && UUID.test(sent) ? sent : randomUUID();
    const log = requestLogger(deps.logger, requestId);
    const call: RouteCall = {
      route: impl.route,
      req,
      deps,
      requestId,
      log,
      sql: countStatements(deps.sql),
      clientIp: clientIp(req, { source: deps.config.clientIpSource, trustedProxyHops: deps.config.trustedProxyHops }),
      body: undefined,
      query: undefined,
      params: { ...req.params },
      responseHeaders: {},
    };
    let response: HttpResponse;
    try {
      response = toHttpResponse(await chain(call, context ?? ({} as Context)));
    } catch (error) {
      response = errorResponse(error, requestId, log);
    }
    Object.assign(response.headers, call.responseHeaders, { "X-Request-ID": requestId });
    log.info("request", {
      method: req.method,
      path: req.path,
      route: impl.route.file,
      status: response.status,
      durationMs: Math.round(performance.now() - started),
      sqlStatements: call.sql.count,
      appId: call.tenant?.appId,
    });
    return response;
  };
};

const toHttpResponse = (outcome: Outcome): HttpResponse =>
  outcome.kind === "raw"
    ? outcome.response
    : { status: outcome.status, headers: { ...outcome.headers, ...jsonHeaders }, body: JSON.stringify(outcome.body) };

const jsonHeaders = { "Content-Type": "application/json; charset=utf-8" };

/** The failure envelope; unexpected errors are logged with their stack and answered without it. */
export const errorResponse = (error: unknown, requestId: string, log?: { error(msg: string, e: Error): void }): HttpResponse => {
  const known = error instanceof DomainError ? error : undefined;
  if (!known) log?.error("unhandled error", error instanceof Error ? error : new Error(String(error)));
  const failure =
    known ??
    (isDependencyUnavailable(error)
      ? new DomainError("SERVICE_UNAVAILABLE", "a dependency is unavailable; retry later")
      : new DomainError("INTERNAL", "internal error"));
  const body = {
    success: false,
    error: { message: failure.message, code: failure.code, ...(failure.issues ? { issues: failure.issues } : {}) },
    requestId,
  };
  return { status: errorStatus[failure.code], headers: { ...jsonHeaders }, body: JSON.stringify(body) };
};
