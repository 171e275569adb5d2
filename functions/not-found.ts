import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { DomainError } from "../core/domain-error";
import { errorResponse } from "../core/http/pipeline";
import { toApiGatewayResult } from "../core/runtime/lambda/api-gateway";

/** API Gateway's catch-all route: a path no route matches answers the service's envelope 404, as the Node host does. */
export const handler = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
  const requestId = event.requestContext?.requestId ?? "";
  return toApiGatewayResult(errorResponse(new DomainError("NOT_FOUND", "no such route"), requestId));
};
