import * as z from "zod";
import type { ErrorCode } from "../domain-error";
import { errorStatus } from "../http/errors";
import { authPolicies, type RouteDef } from "../http/route";
import { operationExamples } from "./operation-examples";
import { webhooksSection } from "./webhooks-section";

type Json = Record<string, unknown>;

/**
 * A schema's JSON Schema, its named parts (zod `.meta({ id })`) moved into `named` and referenced from
 * `#/components/schemas/`, so generators give them names. A name must mean one shape in every place it is used.
 */
const schemaOf = (schema: z.ZodType, io: "input" | "output", named: Record<string, Json>): Json => {
  const { $schema: _, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json;
  for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, Json>)) {
    const json = toComponentRefs(def);
    if (named[id] && JSON.stringify(named[id]) !== JSON.stringify(json)) throw new Error(`schema ${id} has two shapes (as ${io})`);
    named[id] = json;
  }
  return toComponentRefs(rest);
};

const toComponentRefs = (json: Json): Json =>
  JSON.parse(JSON.stringify(json), (key, value: unknown) =>
    key === "$ref" && typeof value === "string" ? value.replace(/^#\/\$defs\//, "#/components/schemas/") : value,
  ) as Json;

const errorEnvelope = {
  description: "Every failure: `error.code` is one of the closed set; `issues` on validation failures only.",
  type: "object",
  required: ["success", "error", "requestId"],
  properties: {
    success: { const: false },
    error: {
      type: "object",
      required: ["message", "code"],
      properties: {
        message: { type: "string" },
        code: { type: "string", enum: Object.keys(errorStatus) },
        issues: {
          type: "array",
          items: {
            type: "object",
            required: ["path", "message"],
            properties: { path: { type: "array", items: { type: ["string", "integer"] } }, message: { type: "string" } },
          },
        },
      },
    },
    requestId: { type: "string" },
  },
};

/** Response headers, each described once under `components.headers` and referenced from the answers that carry it. */
const responseHeaders: Record<string, Json> = {
  "X-Request-ID": {
    description: "The request's id: the UUID the client sent in `X-Request-ID`, else a fresh UUID v4. It is `requestId` in an error body and in every log line of the request.",
    schema: { type: "string", format: "uuid" },
  },
  RateLimit: {
    description: 'IETF RateLimit: the limiter of the route closest to its limit, with what it has left (`r`) and the seconds until it resets (`t`), e.g. `"actor";r=59;t=60`. On every answer of a limited route: refused requests count too.',
    schema: { type: "string" },
  },
  "RateLimit-Policy": {
    description: 'IETF RateLimit-Policy: every limiter of the route with its quota (`q`) and window in seconds (`w`), e.g. `"actor";q=60;w=60, "aggregate-ip";q=600;w=60`.',
    schema: { type: "string" },
  },
  "Retry-After": { description: "Seconds until the limit that refused the request lets one through.", schema: { type: "integer", minimum: 0 } },
  "Idempotent-Replayed": { description: "`true` on the first answer replayed for a repeated `Idempotency-Key` and the same body.", schema: { type: "string", enum: ["true"] } },
};

const headerRefs = (...names: string[]): Json => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const sorted = (named: Record<string, Json>): Record<string, Json> =>
  Object.fromEntries(Object.entries(named).sort(([a], [b]) => (a < b ? -1 : 1)));

/** Error codes every route of a policy can answer, besides the route's own. */
const policyErrors = (route: RouteDef): ErrorCode[] => {
  const codes: ErrorCode[] = route.neverFails ? [] : ["INTERNAL"];
  const policy = authPolicies[route.auth];
  if (policy.credential === "service-token") codes.push("UNAUTHORIZED", "TENANT_UNAVAILABLE", "SERVICE_UNAVAILABLE");
  // A viewer-optional read refuses an actor's DID sent without the actor it belongs to.
  if (policy.actor !== "none") codes.push("ACTING_ACTOR_REQUIRED");
  if (policy.credential === "system-token") codes.push("UNAUTHORIZED", "SERVICE_UNAVAILABLE");
  // Every limited route takes its limiter in the database, so a database that is down or slow answers 503.
  if (route.rateLimit) codes.push("RATE_LIMITED", "SERVICE_UNAVAILABLE");
  // Any request can be refused by the host before its route (a malformed request target or Host: docs/errors.md).
  codes.push("VALIDATION_ERROR");
  if (route.body?.kind === "json") codes.push("PAYLOAD_TOO_LARGE");
  return codes;
};

const actorHeaders = (route: RouteDef) =>
  authPolicies[route.auth].actor !== "none"
    ? [
        {
          name: "X-Svc-Acting-Actor",
          in: "header",
          required: authPolicies[route.auth].actor === "required",
          description:
            "The caller's own user id, stored as the opaque `authorId`. Omit for a viewer-less read. Sent as UTF-8 and normalised to NFC (one actor however it is spelled); control characters, or bytes that are not UTF-8, are a 400.",
          schema: { type: "string", maxLength: 256 },
          example: "alice",
        },
        {
          name: "X-Svc-Acting-Actor-Did",
          in: "header",
          required: false,
          description: "The actor's DID, returned as `authorDid`; only with `X-Svc-Acting-Actor` (alone it is a 401 `ACTING_ACTOR_REQUIRED`).",
          schema: { type: "string" },
        },
      ]
    : [];

const operation = (route: RouteDef, named: Record<string, Json>): Json => {
  // The reference page fills "Test Request" from these, and shows them beside each operation.
  const example = operationExamples[route.file] ?? {};
  const parameters: Json[] = [...actorHeaders(route)];
  for (const [where, schema] of [["path", route.params], ["query", route.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(schema, "input", named) as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, { "x-required": described, ...s }] of Object.entries(json.properties ?? {})) {
      // `x-required`: the route checks the parameter itself, for its own answer, so zod takes it as optional.
      const required = where === "path" || (json.required ?? []).includes(name) || described === true;
      parameters.push({ name, in: where, required, schema: s, ...(example.parameters?.[name] === undefined ? {} : { example: example.parameters[name] }) });
    }
  }
  parameters.push({
    name: "X-Request-ID",
    in: "header",
    required: false,
    description: "A UUID to trace the request by, echoed back; anything else is replaced with a fresh UUID v4.",
    schema: { type: "string" },
  });
  if (route.idempotent) {
    parameters.push({ name: "Idempotency-Key", in: "header", required: false, description: "1 to 255 printable ASCII characters; kept 24 hours.", schema: { type: "string", maxLength: 255 } });
  }
  const success: Json = route.response
    ? { "application/json": { schema: { type: "object", required: ["success", "data"], properties: { success: { const: true }, data: schemaOf(route.response, "output", named) } }, ...(example.answer === undefined ? {} : { example: { success: true, data: example.answer } }) } }
    : { [route.produces ?? "application/octet-stream"]: example.answer === undefined ? {} : { example: example.answer } };
  const limits = route.rateLimit ? ["RateLimit", "RateLimit-Policy"] : [];
  const successHeaders = headerRefs("X-Request-ID", ...limits, ...(route.idempotent ? ["Idempotent-Replayed"] : []));
  const responses: Record<string, Json> = { [String(route.status)]: { description: "Success", headers: successHeaders, content: success } };
  for (const [status, description] of Object.entries(route.otherResponses ?? {})) responses[status] = { description, headers: headerRefs("X-Request-ID", ...limits) };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...policyErrors(route), ...(route.errors ?? [])])) {
    const status = errorStatus[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers = headerRefs("X-Request-ID", ...(status === 429 ? ["Retry-After"] : []), ...limits);
    responses[String(status)] = { description: codes.join(", "), headers, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  }
  const op: Json = { operationId: route.file.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()), summary: route.summary, parameters, responses };
  if (route.body?.kind === "json") {
    op.requestBody = { required: true, content: { "application/json": { schema: schemaOf(route.body.schema, "input", named), ...(example.body === undefined ? {} : { example: example.body }) } } };
  }
  if (route.body?.kind === "multipart") {
    const { field, partTypes } = route.body;
    const part = `One part \`${field}\`, whose Content-Type is exactly one of: ${partTypes.join(", ")} (no parameters).`;
    op.requestBody = {
      required: true,
      content: {
        "multipart/form-data": {
          schema: { type: "object", required: [field], properties: { [field]: { type: "string", format: "binary", description: part } } },
          // `contentType` is the list as OpenAPI states it; the header's enum says the same as a schema.
          encoding: {
            [field]: {
              contentType: partTypes.join(", "),
              headers: { "Content-Type": { required: true, description: part, schema: { type: "string", enum: partTypes } } },
            },
          },
        },
      },
    };
  }
  if (route.description) op.description = route.description;
  if (route.codeSamples) op["x-codeSamples"] = route.codeSamples;
  const { credential } = authPolicies[route.auth];
  if (credential === "service-token") op.security = [{ serviceToken: [] }];
  else if (credential === "system-token") op.security = [{ systemToken: [] }];
  else op.security = [];
  return op;
};

/**
 * The OpenAPI 3.1 description of `routes` (system routes excluded), without `servers`: it is generated into
 * `functions/openapi.json` (`npm run openapi`) so the openapi function carries no route's code, and the serving
 * deployment adds its own base URL.
 */
export const openApiDocument = (routes: readonly RouteDef[]): Json => {
  const paths: Record<string, Json> = {};
  const named: Record<string, Json> = {};
  for (const route of routes) {
    if (route.internal) continue;
    const op = operation(route, named);
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: op };
    if (route.head) paths[route.path]!.head = { ...op, operationId: `${op.operationId}Head`, summary: `${route.summary} (headers only)` };
  }
  const document = {
    openapi: "3.1.0",
    info: {
      title: "Audio post service",
      version: "1.0.0",
      description:
        "Headless multi-tenant store of audio posts (`dev.svc.*` lexicons). Tenant backends call it with a service token and assert the acting user per request. Every JSON response is an envelope; failures carry `error.code` from the closed set in the Error schema. Every string the API accepts (body, query, path) must be well-formed Unicode without NUL, else 400 `VALIDATION_ERROR`. A dependency that is down, refuses connections or does not answer in time, or a request that passes its deadline, is 503 `SERVICE_UNAVAILABLE` (retry later), never a 500; `/health` always answers 200 within 2 s.",
    },
    paths,
    webhooks: webhooksSection((schema) => schemaOf(schema, "output", named)),
    components: {
      securitySchemes: {
        serviceToken: { type: "http", scheme: "bearer", description: "A tenant's service token from SVC_APP_TOKENS." },
        systemToken: { type: "http", scheme: "bearer", description: "SYSTEM_AUTH_TOKEN, for /api/v1/system/* routes." },
      },
      headers: responseHeaders,
      schemas: { ...sorted(named), Error: errorEnvelope },
    },
  };
  return document;
};
