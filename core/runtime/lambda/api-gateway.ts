import { Readable } from "node:stream";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import type { HttpRequest, HttpResponse } from "../../http-message/http-message";

/** An API Gateway HTTP API (payload v2) event as a runtime-neutral request. */
export const fromApiGatewayEvent = (event: APIGatewayProxyEventV2): HttpRequest => {
  const headers: Record<string, string> = {};
  // A field value's leading and trailing spaces and tabs are not part of it (RFC 9110 §5.5); Node's parser drops
  // them, so the same request reads the same on either host (an actor "  bob  " is bob).
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value !== undefined) headers[name.toLowerCase()] = value.replace(/^[ \t]+|[ \t]+$/g, "");
  if (event.cookies?.length) headers.cookie = event.cookies.join("; ");
  const body = event.body === undefined ? Buffer.alloc(0) : Buffer.from(event.body, event.isBase64Encoded ? "base64" : "utf8");
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    headers,
    query: new URLSearchParams(event.rawQueryString ?? ""),
    params: Object.fromEntries(Object.entries(event.pathParameters ?? {}).filter(([, v]) => v !== undefined)) as Record<string, string>,
    sourceIp: event.requestContext.http.sourceIp,
    body: () => Readable.from([body]),
  };
};

/** A response as API Gateway wants it: text stays text, anything else travels base64-encoded. */
export const toApiGatewayResult = async (res: HttpResponse): Promise<APIGatewayProxyStructuredResultV2> => {
  const result: APIGatewayProxyStructuredResultV2 = { statusCode: res.status, headers: res.headers };
  if (res.body === undefined) return result;
  if (typeof res.body === "string") return { ...result, body: res.body, isBase64Encoded: false };
  const bytes = res.body instanceof Uint8Array ? Buffer.from(res.body) : Buffer.concat(await collect(res.body));
  return { ...result, body: bytes.toString("base64"), isBase64Encoded: true };
};

const collect = async (stream: Readable): Promise<Buffer[]> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return chunks;
};
