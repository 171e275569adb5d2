import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { DomainError } from "../core/domain-error";
import { randomUUID } from "node:crypto";
import { isMalformedTarget } from "../core/http-message/percent-encoding";
import { refusedResponse, sentRequestId } from "../core/http/pipeline";
import { toApiGatewayResult } from "../core/runtime/lambda/api-gateway";
import { refusalLogger } from "../core/runtime/lambda/lambda-handler";

/**
 * API Gateway's catch-all route: a path no route matches answers the service's envelope 404, as the Node host does.
 * A malformed target is a 400 first, as on the Node host and a route's Lambda.
 */
export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
  // A client's own UUID is echoed, as on every route; else a fresh one (API Gateway's id is no UUID).
  const requestId = sentRequestId(event.headers?.["x-request-id"]) ?? randomUUID();
  const request = { method: event.requestContext.http.method, path: event.rawPath };
  const refusal = isMalformedTarget(`${event.rawPath}?${event.rawQueryString ?? ""}`) ? new DomainError("VALIDATION_ERROR", "malformed request target") : new DomainError("NOT_FOUND", "no such route");
  return toApiGatewayResult(refusedResponse(refusalLogger(), requestId, request, refusal));
};
