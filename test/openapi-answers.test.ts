/**
 * The OpenAPI description against the service's real answers: every status a route gives is listed for it, every
 * error code under its status, and every header a client reads (request id, limits, replay) is described.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../core/openapi/openapi-document";
import { routeList } from "../functions/routes";
import { audioFixture } from "./support/audio-fixtures";
import { multipartBody } from "./support/multipart-body";
import { createPost } from "./support/post-bodies";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type CallResult, type TestService } from "./support/test-service";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const document = openApiDocument(routeList) as Json;

/** Headers a client reads off an answer; each one sent must be described on that answer. */
const clientHeaders = ["x-request-id", "ratelimit", "ratelimit-policy", "retry-after", "idempotent-replayed"];

/** Fails unless the document describes this answer of `method` on the path template `path`. */
const expectDescribed = (method: string, path: string, answer: CallResult) => {
  const responses = document.paths[path]?.[method.toLowerCase()]?.responses as Json | undefined;
  expect(responses, `${method} ${path}`).toBeDefined();
  const response = responses![String(answer.status)];
  expect(response, `${method} ${path} answered ${answer.status}, which the document does not list`).toBeDefined();
  if (answer.status >= 400 && answer.json?.success === false) {
    expect(response.description.split(", "), `${method} ${path} ${answer.status}`).toContain(answer.json.error.code);
  } else if (answer.status >= 400) {
    // A bare status (a 416 with no body) must not be described as an error envelope.
    expect(response.content, `${method} ${path} ${answer.status} has no error body`).toBeUndefined();
  }
  const described = Object.keys(response.headers ?? {}).map((name) => name.toLowerCase());
  for (const header of clientHeaders) {
    if (answer.headers[header] !== undefined) expect(described, `${method} ${path} ${answer.status} sends ${header}`).toContain(header);
  }
};

describe.each(edgeMatrix)("the OpenAPI description lists what the service answers, over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  it("a request the host refuses before its route (a malformed request target) is a 400 VALIDATION_ERROR, listed on every route, /health included", async () => {
    const described = routeList.filter((route) => document.paths[route.path]?.[route.method.toLowerCase()]);
    expect(described.map((route) => route.path)).toContain("/health");
    for (const route of described) {
      const path = route.path.replace(/\{[^}]+\}/g, "3kabcdefghijk");
      const answer = await svc.call(route.method, `${path}?%zz`, { token: null });
      expect(answer.status, `${route.method} ${route.path}`).toBe(400);
      expectDescribed(route.method, route.path, answer);
    }
  });

  it("a create and its replay: 201 with RateLimit, RateLimit-Policy, X-Request-ID and Idempotent-Replayed described", async () => {
    const create = () => svc.post("/api/v1/posts", { actor: "doc-author", json: { text: "described" }, headers: { "idempotency-key": "doc-1" } });
    const first = await create();
    const replay = await create();
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(first.headers.ratelimit).toBeDefined();
    for (const answer of [first, replay]) expectDescribed("POST", "/api/v1/posts", answer);
    const read = await svc.get(`/api/v1/posts/${first.json.data.postId}`, { actor: "doc-author" });
    expect(read.headers["x-request-id"]).toBeDefined();
    expectDescribed("GET", "/api/v1/posts/{postId}", read);
  });

  it("a viewer-optional read with a DID and no actor is a 401 ACTING_ACTOR_REQUIRED, listed on both reads that take a viewer", async () => {
    const get = await svc.get("/api/v1/posts/3kabcdefghijk", { actorDid: "did:plc:abc" });
    expect(get.json.error.code).toBe("ACTING_ACTOR_REQUIRED");
    expectDescribed("GET", "/api/v1/posts/{postId}", get);
    const replies = await svc.get("/api/v1/posts/3kabcdefghijk/replies", { actorDid: "did:plc:abc" });
    expect(replies.json.error.code).toBe("ACTING_ACTOR_REQUIRED");
    expectDescribed("GET", "/api/v1/posts/{postId}/replies", replies);
  });

  it("a JSON body over 256 KiB on the direct-upload route is a 413 PAYLOAD_TOO_LARGE, listed", async () => {
    const big = await svc.post("/api/v1/audio/uploads", { actor: "doc-uploader", json: { mimeType: "audio/wav", size: 1, pad: "x".repeat(300_000) } });
    expect(big.status).toBe(413);
    expectDescribed("POST", "/api/v1/audio/uploads", big);
  });

  it("a 429 with Retry-After, RateLimit and RateLimit-Policy, all described", async () => {
    let answer: CallResult | undefined;
    for (let i = 0; i < 61; i++) answer = await svc.get("/api/v1/posts", { actor: "doc-reader" });
    expect(answer!.status).toBe(429);
    expect(answer!.headers["retry-after"]).toBeDefined();
    expectDescribed("GET", "/api/v1/posts", answer!);
  });

  it("list `limit`: the document's pattern takes exactly what the service takes (1 to 100)", async () => {
    const parameter = (document.paths["/api/v1/posts"].get.parameters as Json[]).find((p) => p.name === "limit")!;
    const pattern = new RegExp(parameter.schema.pattern);
    for (const limit of ["0", "1", "20", "99", "100", "101", "999", "007"]) {
      const answer = await svc.get(`/api/v1/posts?limit=${limit}`, { actor: `doc-limit-${limit}` });
      expect(pattern.test(limit), `limit=${limit}`).toBe(answer.status === 200);
      expectDescribed("GET", "/api/v1/posts", answer);
    }
  });

  /** A signed playback path of a fresh post's audio, and the audio's size. */
  const playback = async (actor: string) => {
    const fixture = await audioFixture("audio/wav");
    const { body, contentType } = await multipartBody([{ name: "file", bytes: fixture.bytes, type: "audio/wav" }]);
    const { blob } = (await svc.post("/api/v1/audio/upload", { actor, body, headers: { "content-type": contentType } })).json.data;
    const post = (await createPost(svc, actor, { text: "", embed: { $type: "dev.svc.embed.audio", audio: blob } })) as unknown as { embed: { url: string } };
    return { url: new URL(post.embed.url), size: fixture.bytes.length };
  };
  const withQuery = (url: URL, change: (query: URLSearchParams) => void) => {
    const query = new URLSearchParams(url.search);
    change(query);
    return `${url.pathname}?${query}`;
  };

  it("a playback Range past the end is a 416 with Content-Range bytes */<size> and no body, listed", async () => {
    const { url, size } = await playback("doc-range");
    const answer = await svc.get(`${url.pathname}${url.search}`, { token: null, headers: { range: `bytes=${size + 5}-` } });
    expect(answer.status).toBe(416);
    expect(answer.headers["content-range"]).toBe(`bytes */${size}`);
    expect(answer.body.length).toBe(0);
    expectDescribed("GET", "/api/v1/audio", answer);
  });

  it("a playback query parameter the route cannot do without is described as required; `format` lists exactly what it takes", async () => {
    const { url } = await playback("doc-query");
    const parameters = document.paths["/api/v1/audio"].get.parameters as Json[];
    const parameter = (name: string) => parameters.find((p) => p.in === "query" && p.name === name)!;
    for (const name of ["url", "exp", "sig"]) {
      const answer = await svc.get(withQuery(url, (q) => q.delete(name)), { token: null });
      expect(answer.status, `without ${name}`).toBe(name === "url" ? 400 : 403);
      expectDescribed("GET", "/api/v1/audio", answer);
      expect(parameter(name).required, name).toBe(true);
    }
    expect(parameter("format").required).toBe(false);
    expect((await svc.get(withQuery(url, () => {}), { token: null })).status).toBe(200);
    for (const format of ["mp3", "wav", "MP3", ""]) {
      const answer = await svc.get(withQuery(url, (q) => q.set("format", format)), { token: null });
      expectDescribed("GET", "/api/v1/audio", answer);
      expect(parameter("format").schema.enum.includes(format), `format=${format}`).toBe(answer.status !== 400);
    }
  });
});
