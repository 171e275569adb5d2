import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import type { Deps } from "../../deps";
import { DomainError } from "../../domain-error";
import { hasMalformedPercentEscape } from "../../http-message/percent-encoding";
import { createRouteHandler, errorResponse, sentRequestId } from "../../http/pipeline";
import { createLogger } from "../../observability/logger";
import { isHead } from "../../http/route";
import type { RouteImpl } from "../../http/route-call";
import { fromApiGatewayEvent, toApiGatewayResult } from "./api-gateway";

export type ApiGatewayHandler = (event: APIGatewayProxyEventV2, context?: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * A route as an API Gateway Lambda handler over the given ports, resolved once per container. A container whose
 * ports could not be built (SSM throttled, Aurora still waking, a bad variable) answers 503 in the envelope and
 * tries again on its next call: kept, the failure would answer every later call of that container the same way.
 */
export const lambdaHandler = (impl: RouteImpl, deps: () => Promise<Deps>): ApiGatewayHandler => {
  let handle: Promise<ReturnType<typeof createRouteHandler>> | undefined;
  return async (event, context) => {
    // API Gateway passes such a target through; the Node host refuses it before any route, and so does this.
    if (hasMalformedPercentEscape(event.rawPath) || hasMalformedPercentEscape(event.rawQueryString ?? "")) {
      const requestId = sentRequestId(event.headers?.["x-request-id"]) ?? randomUUID();
      return toApiGatewayResult(errorResponse(new DomainError("VALIDATION_ERROR", "malformed request target"), requestId));
    }
    const building = (handle ??= deps().then((d) => createRouteHandler(impl, d)));
    let route;
    try {
      route = await building;
    } catch (error) {
      if (handle === building) handle = undefined;
      return couldNotStart(error, sentRequestId(event.headers?.["x-request-id"]) ?? randomUUID());
    }
    const response = await route(fromApiGatewayEvent(event), context);
    if (isHead(event.requestContext.http.method)) delete response.body;
    return toApiGatewayResult(response);
  };
};

const couldNotStart = (error: unknown, requestId: string): Promise<APIGatewayProxyStructuredResultV2> => {
  createLogger("error").error("the function could not start; its next call tries again", { requestId }, error instanceof Error ? error : new Error(String(error)));
  return toApiGatewayResult(errorResponse(new DomainError("SERVICE_UNAVAILABLE", "the service could not start; retry later"), requestId));
};
