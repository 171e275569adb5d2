import { readFile } from "node:fs/promises";
import * as z from "zod";
import { describe, expect, it } from "vitest";
import { playbackFormats } from "../core/audio/play-audio";
import type { RouteDef } from "../core/http/route";
import { openApiDocument } from "../core/openapi/openapi-document";
import { stageOrder } from "../core/records/stages";
import { openApiJson, openApiJsonPath } from "../scripts/write-openapi";
import { webhookBody } from "../core/webhooks/webhook-event";
import { routeList } from "./routes";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const document = openApiDocument(routeList) as Json;

const refsIn = (json: unknown): string[] =>
  json && typeof json === "object"
    ? Object.entries(json).flatMap(([key, value]) => (key === "$ref" && typeof value === "string" ? [value] : refsIn(value)))
    : [];

describe("the served OpenAPI description", () => {
  it("is the one generated from the route table (run `npm run openapi` after changing a route or a schema)", async () => {
    expect(await readFile(openApiJsonPath, "utf8")).toBe(openApiJson());
  });

  it.each(["AudioPostView", "AudioEmbedView", "BlobRef", "ProcessingState", "ProcessingRequest", "StageState", "Transcript", "Waveform", "Error", "StageSettleEvent"])(
    "names the component schema %s, so client generators give it a name",
    (name) => {
      expect(document.components.schemas[name]).toMatchObject({ type: "object" });
    },
  );

  it("reads and writes refer to the named schemas instead of repeating them", () => {
    const getPost = document.paths["/api/v1/posts/{postId}"].get.responses["200"].content["application/json"].schema;
    expect(getPost.properties.data).toEqual({ $ref: "#/components/schemas/AudioPostView" });
    const create = document.paths["/api/v1/posts"].post.requestBody.content["application/json"].schema;
    expect(create.properties.embed.properties.audio).toEqual({ $ref: "#/components/schemas/BlobRef" });
  });

  it("every $ref resolves to a component (a schema or a header)", () => {
    const refs = new Set(refsIn(document));
    expect(refs.size).toBeGreaterThan(5);
    for (const ref of refs) {
      const [kind, name] = ref.replace("#/components/", "").split("/") as [string, string];
      expect(document.components[kind]?.[name], ref).toBeDefined();
    }
  });

  it("describes the stage-settle event under OpenAPI 3.1 `webhooks`, with the body and headers the service sends", () => {
    const hook = document.webhooks.stageSettle.post;
    expect(hook.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/StageSettleEvent" });
    const event = document.components.schemas.StageSettleEvent;
    const sent = JSON.parse(webhookBody({ eventId: "e", appId: "a", postId: "p", stage: "trim", status: "ready", occurredAt: new Date(0).toISOString() }));
    expect(Object.keys(event.properties)).toEqual(Object.keys(sent));
    expect(event.required).toEqual(Object.keys(sent));
    expect(event.properties.stage.enum).toEqual(stageOrder);
    expect(hook.parameters.map((p: Json) => p.name)).toEqual(["X-Svc-Signature", "X-Svc-Timestamp", "X-Svc-Event-Id", "webhook-id", "webhook-timestamp", "webhook-signature"]);
  });

  it("a route declared never to fail (/health) is described without a 500, only the host's 400 for a malformed request; every other route keeps it", () => {
    expect(Object.keys(document.paths["/health"].get.responses)).toEqual(["200", "400"]);
    for (const route of (routeList as readonly RouteDef[]).filter((r) => !r.internal && r.file !== "health")) {
      expect(document.paths[route.path][route.method.toLowerCase()].responses["500"]?.description, route.file).toContain("INTERNAL");
    }
  });

  it("GET /api/v1/audio describes url, exp and sig as required (the route refuses a playback without them) and `format` as its one value", () => {
    const parameters: Record<string, Json> = Object.fromEntries((document.paths["/api/v1/audio"].get.parameters as Json[]).filter((p) => p.in === "query").map((p) => [p.name, p]));
    expect(Object.fromEntries(Object.entries(parameters).map(([name, p]) => [name, p.required]))).toEqual({ url: true, exp: true, sig: true, format: false });
    expect(parameters.format?.schema).toEqual({ type: "string", enum: [...playbackFormats] });
    // The marker is read by the generator, not passed through as a keyword.
    expect(JSON.stringify(parameters)).not.toContain("x-required");
  });

  it("GET /api/v1/audio lists the 416 it answers to a Range past the end", () => {
    expect(document.paths["/api/v1/audio"].get.responses["416"]?.description).toMatch(/Range not satisfiable/);
  });

  it("refuses a named schema that has two shapes (a loose object read and written)", () => {
    const loose = z.object({ a: z.string() }).meta({ id: "Loose" });
    const route = { ...routeList.find((r) => r.file === "create-post")!, body: { kind: "json" as const, schema: z.object({ x: loose }), maxBytes: 1 }, response: loose };
    expect(() => openApiDocument([route])).toThrow(/Loose has two shapes/);
  });
});
