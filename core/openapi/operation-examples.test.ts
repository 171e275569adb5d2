import { describe, expect, it } from "vitest";
import type * as z from "zod";
import { routeList } from "../../functions/routes";
import type { RouteDef } from "../http/route";
import { stageSettleEventSchema } from "../webhooks/stage-settle-schema";
import { openApiDocument } from "./openapi-document";
import { operationExamples } from "./operation-examples";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const document = openApiDocument(routeList) as Json;
const methods = ["get", "put", "post", "patch", "delete", "head"];
const operations: [string, Json][] = [
  ...Object.entries(document.paths as Json).flatMap(([path, item]) =>
    methods.filter((m) => item[m]).map((m) => [`${m.toUpperCase()} ${path}`, item[m]] as [string, Json]),
  ),
  ...Object.entries(document.webhooks as Json).map(([name, item]) => [`webhook ${name}`, item.post] as [string, Json]),
];
const publicRoutes = (routeList as readonly RouteDef[]).filter((route) => !route.internal);

describe("the reference page's operations", () => {
  it.each(operations)("%s has a short title for the sidebar: a summary of at most 32 characters, no Markdown", (_, op) => {
    expect(op.summary).toMatch(/^[A-Z][^`*_[\]]{2,31}$/);
  });

  it.each(operations)("%s has an example request: every required parameter, and its body", (_, op) => {
    for (const parameter of op.parameters ?? []) {
      if (parameter.required && parameter.in !== "header") expect(parameter.example, parameter.name).toBeDefined();
    }
    const body = op.requestBody?.content;
    // A multipart upload cannot be written as JSON: its request examples are the code samples (curl, fetch).
    if (body?.["application/json"]) expect(body["application/json"].example).toBeDefined();
    if (body?.["multipart/form-data"]) expect(op["x-codeSamples"]?.length).toBeGreaterThan(0);
  });

  it.each(operations)("%s has an example answer, unless it answers audio bytes", (_, op) => {
    const success = Object.entries(op.responses as Json).filter(([status]) => status.startsWith("2"));
    expect(success.length).toBeGreaterThan(0);
    for (const [, response] of success) {
      for (const [type, media] of Object.entries((response.content ?? {}) as Json)) {
        if (!type.startsWith("audio/")) expect(media.example, type).toBeDefined();
      }
    }
  });

  it.each(publicRoutes.map((route) => [route.file, route] as const))("the example of %s is valid against the route's own schemas", (file, route) => {
    const example = operationExamples[file];
    expect(example).toBeDefined();
    const params = route.params && Object.fromEntries(Object.keys((route.params as z.ZodObject).shape).map((name) => [name, example!.parameters?.[name]]));
    if (route.params) expect(route.params.safeParse(params).error).toBeUndefined();
    if (route.query) {
      const names = Object.keys((route.query as z.ZodObject).shape);
      const query = Object.fromEntries(Object.entries(example!.parameters ?? {}).filter(([name]) => names.includes(name)));
      expect(route.query.safeParse(query).error).toBeUndefined();
    }
    if (route.body?.kind === "json") expect(route.body.schema.safeParse(example!.body).error).toBeUndefined();
    if (route.response) expect(route.response.safeParse(example!.answer).error).toBeUndefined();
  });

  it("the webhook's example is the event the service sends", () => {
    const example = document.webhooks.stageSettle.post.requestBody.content["application/json"].example;
    expect(stageSettleEventSchema.strict().safeParse(example).error).toBeUndefined();
  });
});
