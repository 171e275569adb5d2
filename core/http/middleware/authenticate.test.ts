import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Config, Tenant } from "../../config/types";
import type { Deps } from "../../deps";
import { DomainError } from "../../domain-error";
import { errorStatus } from "../errors";
import type { AuthPolicy, RouteDef } from "../route";
import type { RouteCall } from "../route-call";
import { authenticate } from "./authenticate";

const alpha: Tenant = { appId: "alpha", token: "alpha-token-0123456789abcdef0123456789", did: "did:web:alpha.test" };

const callFor = (auth: AuthPolicy, headers: Record<string, string>, config: Partial<Config> = {}): RouteCall => ({
  route: { auth } as RouteDef,
  req: { method: "GET", path: "/", headers, query: new URLSearchParams(), params: {}, sourceIp: "127.0.0.1", body: () => Readable.from([]) },
  deps: { config: { tenants: new Map([["alpha", alpha]]), ...config } as Config } as Deps,
  requestId: "r",
  log: {} as RouteCall["log"],
  sql: {} as RouteCall["sql"],
  clientIp: "127.0.0.1",
  body: undefined,
  query: undefined,
  params: {},
  responseHeaders: {},
});

const run = async (call: RouteCall) => {
  try {
    await authenticate().before!({ event: call } as never);
    return "passed";
  } catch (error) {
    return error instanceof DomainError ? `${errorStatus[error.code]} ${error.code}` : String(error);
  }
};

describe("authenticate", () => {
  it("system routes fail closed with 503 SERVICE_UNAVAILABLE while SYSTEM_AUTH_TOKEN is unset, whatever the caller sends", async () => {
    expect(await run(callFor("system", { authorization: "Bearer anything-at-all-0000000000000000" }))).toBe("503 SERVICE_UNAVAILABLE");
  });

  it("system routes take only the system token: a tenant's service token is 401", async () => {
    const config = { systemAuthToken: "system-token-0123456789abcdef0123456789" };
    expect(await run(callFor("system", { authorization: `Bearer ${alpha.token}` }, config))).toBe("401 UNAUTHORIZED");
    expect(await run(callFor("system", {}, config))).toBe("401 UNAUTHORIZED");
    expect(await run(callFor("system", { authorization: `Bearer ${config.systemAuthToken}` }, config))).toBe("passed");
  });

  it("the tenancy key is derived from the matching service token, never from the request", async () => {
    const call = callFor("viewer", { authorization: `Bearer ${alpha.token}`, "x-svc-acting-actor": "u1" });
    expect(await run(call)).toBe("passed");
    expect(call.tenant?.appId).toBe("alpha");
    expect(call.actor).toBe("u1");
  });

  it("anonymous and public routes need no credential", async () => {
    expect(await run(callFor("anonymous", {}))).toBe("passed");
    expect(await run(callFor("public", {}))).toBe("passed");
  });
});
