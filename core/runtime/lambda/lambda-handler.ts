import { randomUUID } from "node:crypto";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import type { Deps } from "../../deps";
import { DomainError } from "../../domain-error";
import { isMalformedTarget } from "../../http-message/percent-encoding";
import { createRouteHandler, errorResponse, refusedResponse, sentRequestId } from "../../http/pipeline";
import { createLogger, type Logger } from "../../observability/logger";
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
  let handle: Promise<{ route: ReturnType<typeof createRouteHandler>; logger: Logger }> | undefined;
  const build = async () => {
    const building = (handle ??= deps().then((d) => ({ route: createRouteHandler(impl, d), logger: d.logger })));
    try {
      return await building;
    } catch (error) {
      if (handle === building) handle = undefined;
      throw error;
    }
  };
  return async (event, context) => {
    // API Gateway passes such a target through; the Node host refuses it before any route, and so does this.
    if (isMalformedTarget(`${event.rawPath}?${event.rawQueryString ?? ""}`)) {
      const requestId = sentRequestId(event.headers?.["x-request-id"]) ?? randomUUID();
      const failure = new DomainError("VALIDATION_ERROR", "malformed request target");
      // Logged at the container's level when its ports are built (they are for every other call), else at info.
      const logger = await build().then((built) => built.logger, () => refusalLogger());
      return toApiGatewayResult(refusedResponse(logger, requestId, { method: event.requestContext.http.method, path: event.rawPath }, failure));
    }
    let route;
    try {
      ({ route } = await build());
    } catch (error) {
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

let containerLogger: Logger | undefined;

/**
 * The container's logger where no ports are (not-found, which has no configuration) or they could not be built: at
 * info, the deployed level, so the request line is written. Made once per container: a Powertools logger is costly.
 */
export const refusalLogger = (): Logger => (containerLogger ??= createLogger("info"));
