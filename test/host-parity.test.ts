import { randomBytes, randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { handler as notFound } from "../functions/not-found";
import { backends } from "./support/databases";
import { rawRequest } from "./support/raw-http";
import { edgeMatrix } from "./support/service-matrix";
import { apiGatewayEvent, startTestService, type CallResult, type TestService } from "./support/test-service";

/**
 * The same request answered the same way by the Node host and by API Gateway's Lambdas. A header sent twice reaches a
 * Lambda as one value joined with ","; over HTTP the Node host gets the two lines, and must read them alike.
 */
describe.each(edgeMatrix)("a header sent twice, over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  /** Sends each listed value as a header line of its own (Node host), or joined with "," as API Gateway does (Lambda). */
  const sendRepeated = async (method: string, path: string, headers: Record<string, string | string[]>, body?: string): Promise<CallResult> => {
    const ip = `10.${randomBytes(3).join(".")}`;
    if (driver === "lambda") {
      const joined = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value].flat().join(",")]));
      return svc.call(method, path, { token: null, ip, headers: joined, body });
    }
    return new Promise((resolve, reject) => {
      const req = httpRequest(svc.baseUrl + path, { method, headers: { ...headers, "x-forwarded-for": ip } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          const flat = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, [value ?? ""].flat().join(", ")]));
          resolve({ status: res.statusCode!, headers: flat, body: bytes, json: JSON.parse(bytes.toString("utf8")) });
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  };
  const bearer = () => `Bearer ${svc.tenants.alpha.token}`;

  it("a repeated Authorization is read as both values joined, not as its first: a good token before a bad one is a 401", async () => {
    const res = await sendRepeated("GET", "/api/v1/posts?rootAuthor=alice", { authorization: [bearer(), "Bearer not-a-token"] });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("UNAUTHORIZED");
  });

  it("a repeated Content-Type is read as both values joined: two application/json are a 400, and no post is written", async () => {
    const headers = { authorization: bearer(), "x-svc-acting-actor": "dup-type", "content-type": ["application/json", "application/json"] };
    const res = await sendRepeated("POST", "/api/v1/posts", headers, JSON.stringify({ text: "typed twice" }));
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "VALIDATION_ERROR", issues: [{ path: ["headers", "Content-Type"] }] });
    expect((await svc.get("/api/v1/posts", { actor: "dup-type" })).json.data.items).toEqual([]);
  });

  it("an X-Svc-Acting-Actor sent twice with a valid token is refused by authentication (400 VALIDATION_ERROR) and counts against the tenant's limit", async () => {
    const res = await sendRepeated("GET", "/api/v1/posts?kind=prompt", { authorization: bearer(), "x-svc-acting-actor": ["alice", "bob"] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringMatching(/sent once/), issues: [{ path: ["headers", "X-Svc-Acting-Actor"] }] });
    expect(res.headers.ratelimit).toMatch(/^"tenant";/);
  });

  it("an X-Svc-Acting-Actor sent twice with a bad token is a 401: the token is checked first, and the refusal counts against the client's IP", async () => {
    const res = await sendRepeated("GET", "/api/v1/posts?kind=prompt", { authorization: "Bearer not-a-token", "x-svc-acting-actor": ["alice", "bob"] });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("UNAUTHORIZED");
    expect(res.headers.ratelimit).toMatch(/^"aggregate-ip";/);
  });

  it("an X-Svc-Acting-Actor-Did sent twice is 400 VALIDATION_ERROR, one DID being expected", async () => {
    const headers = { authorization: bearer(), "x-svc-acting-actor": "alice", "x-svc-acting-actor-did": ["did:plc:abc", "did:plc:def"] };
    const res = await sendRepeated("GET", "/api/v1/posts?kind=prompt", headers);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: "VALIDATION_ERROR", issues: [{ path: ["headers", "X-Svc-Acting-Actor-Did"] }] });
  });

  if (driver === "node") {
    it("a Content-Length sent twice, even with one value, is refused by Node's parser with the 400 envelope, so a route never reads it joined", async () => {
      const port = Number(new URL(svc.baseUrl).port);
      const res = await rawRequest(port, `POST /api/v1/posts HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ success: false, error: { code: "VALIDATION_ERROR" } });
    });
  }
});

/** What API Gateway's catch-all route ($default) gets for an unknown path: the target's bytes as sent. */
const catchAllEvent = (target: string) => {
  const [rawPath, rawQueryString = ""] = target.split("?");
  const event = apiGatewayEvent("GET", new URL("https://svc.example/"), "$default", {}, { "x-request-id": randomUUID() });
  return { ...event, rawPath: rawPath!, rawQueryString, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, path: rawPath! } } };
};

describe("a malformed request target to no route is 400 VALIDATION_ERROR on either host, never a 404", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver: "node", sql: backends[0]!.open });
  });
  afterAll(() => svc?.close());

  const malformed = ["/nope%zz", "/nope?x=%zz", "//health", "/api/v1/posts%zz", "/nope%2"];

  it.each(malformed)("%s on the Node host", async (target) => {
    const res = await rawRequest(Number(new URL(svc.baseUrl).port), `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toEqual({ code: "VALIDATION_ERROR", message: "malformed request target" });
  });

  afterEach(() => vi.restoreAllMocks());

  it.each(malformed)("%s on API Gateway's catch-all route (functions/not-found.ts)", async (target) => {
    // The catch-all logs its request line to stdout, as a Lambda does.
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const event = catchAllEvent(target);
    const res = await notFound(event);
    expect(res.statusCode).toBe(400);
    const body = JSON.parse(res.body!);
    expect(body.error).toEqual({ code: "VALIDATION_ERROR", message: "malformed request target" });
    expect(body.requestId).toBe(event.headers["x-request-id"]);
  });

  it("a well-formed unknown path is still the catch-all's 404", async () => {
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect((await notFound(catchAllEvent("/nope%41?x=%20"))).statusCode).toBe(404);
  });
});
