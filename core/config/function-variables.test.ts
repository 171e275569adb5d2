import { describe, expect, it } from "vitest";
import { route as uploadAudio } from "../../functions/upload-audio";
import { route as getPost } from "../../functions/get-post";
import { route as health } from "../../functions/health";
import { route as openapi } from "../../functions/openapi";
import { requiredEnv } from "../../test/support/config-env";
import { jobScopes, routeScopes } from "../runtime/lambda/function-scopes";
import { ConfigError, configured, parseConfig } from "./parse-config";
import { allScopes } from "./variable-scopes";
import { configVariables } from "./variables";

const quiet = { error() {}, warn() {} };
const { SVC_BLOB_DIR: _, ...withoutBlobs } = requiredEnv;
const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => p.variable);
    throw error;
  }
  return [];
};

describe("a function requires only the variables of its scopes (its route's uses, auth and reads; a job's own)", () => {
  it("a route that does not use blobs (GET /api/v1/posts/{postId}) starts without SVC_BLOB_BUCKET", () => {
    expect(parseConfig(withoutBlobs, quiet, routeScopes(getPost)).blobs).toBeUndefined();
  });

  it("a route that uses blobs (POST /api/v1/audio/upload) does not start without it, and the error names it", () => {
    expect(() => parseConfig(withoutBlobs, quiet, routeScopes(uploadAudio))).toThrow(/SVC_BLOB_BUCKET is required/);
  });

  it("/health's store probes need both stores' names: it does not start without the bucket, nor without DATABASE_URL", () => {
    const { DATABASE_URL: __, ...withoutDatabase } = requiredEnv;
    expect(() => parseConfig(withoutBlobs, quiet, routeScopes(health))).toThrow(/SVC_BLOB_BUCKET is required/);
    expect(problemsOf(() => parseConfig(withoutDatabase, quiet, routeScopes(health)))).toEqual(["DATABASE_URL"]);
  });

  it("the OpenAPI description starts with SVC_PUBLIC_BASE_URL alone: no database, store, tenants or signing key", () => {
    expect(parseConfig({ SVC_PUBLIC_BASE_URL: "https://audio.example.com" }, quiet, routeScopes(openapi)).publicBaseUrl).toBe("https://audio.example.com");
    expect(problemsOf(() => parseConfig({}, quiet, routeScopes(openapi)))).toEqual(["SVC_PUBLIC_BASE_URL"]);
  });

  it("the dead-letter consumer requires DATABASE_URL and nothing else", () => {
    expect(problemsOf(() => parseConfig({}, quiet, jobScopes.deadLetter))).toEqual(["DATABASE_URL"]);
  });

  it("the Node host (every scope) requires every required variable and a blob store", () => {
    const required = configVariables.filter((row) => row.required).map((row) => row.name);
    expect(problemsOf(() => parseConfig({}, quiet)).sort()).toEqual([...required, "SVC_BLOB_DIR"].sort());
    expect(problemsOf(() => parseConfig({}, quiet, allScopes)).sort()).toEqual([...required, "SVC_BLOB_DIR"].sort());
  });

  it("a value set outside the function's scopes is still checked", () => {
    expect(problemsOf(() => parseConfig({ SVC_PUBLIC_BASE_URL: "https://audio.example.com", DATABASE_URL: "mysql://x" }, quiet, routeScopes(openapi)))).toEqual([
      "DATABASE_URL",
    ]);
  });

  it("reaching a value the function's scopes do not cover fails naming its variable", () => {
    const config = parseConfig(withoutBlobs, quiet, routeScopes(getPost));
    expect(() => configured(config.blobs, "SVC_BLOB_BUCKET")).toThrow(ConfigError);
    expect(() => configured(config.blobs, "SVC_BLOB_BUCKET")).toThrow(/SVC_BLOB_BUCKET is required/);
  });

  it("every row belongs to at least one scope", () => {
    expect(configVariables.filter((row) => row.scopes.length === 0).map((row) => row.name)).toEqual([]);
  });
});
