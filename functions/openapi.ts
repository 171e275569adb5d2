import { configured } from "../core/config/parse-config";
import { defineRoute } from "../core/http/route";
import { implement } from "../core/http/route-call";
import { lambda } from "../core/runtime/lambda/lambda-root";
import description from "./openapi.json";

export const route = defineRoute({
  file: "openapi",
  method: "GET",
  path: "/openapi.json",
  summary: "OpenAPI description",
  description: "This OpenAPI 3.1 description, with this deployment as its server.",
  auth: "public",
  rateLimit: null,
  uses: [],
  reads: ["description"],
  status: 200,
  produces: "application/json",
});

/** The description generated from the route table (`npm run openapi`), with this deployment as its server. */
let served: { baseUrl: string; body: string } | undefined;
const body = (baseUrl: string) => {
  if (served?.baseUrl !== baseUrl) {
    const { openapi, info, ...rest } = description;
    served = { baseUrl, body: JSON.stringify({ openapi, info, servers: [{ url: baseUrl }], ...rest }) };
  }
  return served.body;
};

const impl = implement(route, async (call) => ({
  raw: { status: 200, headers: { "Content-Type": "application/json; charset=utf-8" }, body: body(configured(call.deps.config.publicBaseUrl, "SVC_PUBLIC_BASE_URL")) },
}));

export default impl;
export const handler = lambda(impl, {});
