import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { fromApiGatewayEvent } from "./api-gateway";

const event = (headers: Record<string, string>): APIGatewayProxyEventV2 =>
  ({
    rawPath: "/api/v1/posts",
    rawQueryString: "",
    headers,
    requestContext: { http: { method: "GET", sourceIp: "203.0.113.7" } },
    isBase64Encoded: false,
  }) as unknown as APIGatewayProxyEventV2;

describe("an API Gateway event as a request", () => {
  it("header values lose their leading and trailing spaces and tabs, as Node's parser drops them: an actor '  bob  ' is bob on either host", () => {
    const { headers } = fromApiGatewayEvent(event({ "X-Svc-Acting-Actor": " \tbob  ", "Idempotency-Key": "\tk 1 ", Accept: "a, b" }));
    expect(headers).toEqual({ "x-svc-acting-actor": "bob", "idempotency-key": "k 1", accept: "a, b" });
  });
});
