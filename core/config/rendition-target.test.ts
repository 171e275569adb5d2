import { describe, expect, it } from "vitest";
import { parseRenditionTarget } from "./rendition-target";

const system = "s".repeat(32);
const parse = (env: Record<string, string>, systemToken: string | null = system) => {
  const errors: string[] = [];
  const problems: string[] = [];
  const target = parseRenditionTarget(
    (name) => env[name],
    systemToken ?? undefined,
    (variable) => void problems.push(variable) as undefined,
    { error: (message) => void errors.push(message) },
  );
  return { target, errors, problems };
};

describe("SVC_RENDITION_SERVICE_URL", () => {
  it("is unset: no rendition service", () => {
    expect(parse({}).target).toBeUndefined();
  });

  it("requires SYSTEM_AUTH_TOKEN: without it the rendition service is not used, and that is logged at error level", () => {
    const { target, errors } = parse({ SVC_RENDITION_SERVICE_URL: "http://127.0.0.1:3001" }, null);
    expect(target).toBeUndefined();
    expect(errors.join()).toMatch(/SYSTEM_AUTH_TOKEN/);
  });

  it("sends RENDITION_SERVICE_TOKEN, else SYSTEM_AUTH_TOKEN", () => {
    expect(parse({ SVC_RENDITION_SERVICE_URL: "http://127.0.0.1:3001/" }).target).toEqual({ url: "http://127.0.0.1:3001", token: system });
    const own = "r".repeat(40);
    expect(parse({ SVC_RENDITION_SERVICE_URL: "https://r.example/base", RENDITION_SERVICE_TOKEN: own }).target).toEqual({ url: "https://r.example/base", token: own });
    const short = parse({ SVC_RENDITION_SERVICE_URL: "https://r.example", RENDITION_SERVICE_TOKEN: "tiny-secret" });
    expect(short.target?.token).toBe(system);
    expect(short.errors.join()).not.toContain("tiny-secret");
  });

  it("must be an absolute http(s) URL, else the process does not start", () => {
    for (const bad of ["r.example", "ftp://r.example", "https://u:p@r.example", "https://r.example/?a=1"]) {
      expect(parse({ SVC_RENDITION_SERVICE_URL: bad }).problems).toEqual(["SVC_RENDITION_SERVICE_URL"]);
    }
  });
});
