import { implement } from "../core/http/route-call";
import { openApiDocument } from "../core/openapi/openapi-document";
import { routes } from "../core/routes";
import { lambda } from "../core/runtime/lambda";

const impl = implement(routes.openapi, async (call) => ({
  raw: {
    status: 200,
    headers: { "Content-Type": "application/json; charset=utf-8" },
    body: JSON.stringify(openApiDocument(call.deps.config.publicBaseUrl)),
  },
}));

export default impl;
export const handler = lambda(impl);
