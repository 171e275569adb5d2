import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import type { Deps } from "../../deps";
import { createRouteHandler } from "../../http/pipeline";
import { isHead } from "../../http/route";
import type { RouteImpl } from "../../http/route-call";
import { fromApiGatewayEvent, toApiGatewayResult } from "./api-gateway";

export type ApiGatewayHandler = (event: APIGatewayProxyEventV2, context?: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** A route as an API Gateway Lambda handler over the given ports (resolved once per container). */
export const lambdaHandler = (impl: RouteImpl, deps: () => Promise<Deps>): ApiGatewayHandler => {
  let handle: Promise<ReturnType<typeof createRouteHandler>> | undefined;
  return async (event, context) => {
    handle ??= deps().then((d) => createRouteHandler(impl, d));
    const response = await (await handle)(fromApiGatewayEvent(event), context);
    if (isHead(event.requestContext.http.method)) delete response.body;
    return toApiGatewayResult(response);
  };
};
