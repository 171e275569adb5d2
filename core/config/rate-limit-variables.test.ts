import { describe, expect, it } from "vitest";
import { route as getAudio } from "../../functions/get-audio";
import { route as getPost } from "../../functions/get-post";
import { route as health } from "../../functions/health";
import { route as uploadAudio } from "../../functions/upload-audio";
import { requiredEnv } from "../../test/support/config-env";
import { rateLimitPolicies, type RateLimitPolicies } from "../rate-limit/policies";
import { routeScopes } from "../runtime/lambda/function-scopes";
import { parseConfig } from "./parse-config";
import { configVariables, variablesOf } from "./variables";

const quiet = { error() {}, warn() {} };

/** Each limit's variable, and where its value lands in `config.rateLimits`. */
const limitVariables: [string, keyof RateLimitPolicies, string][] = [
  ["SVC_LIMIT_WRITES_PER_ACTOR", "write", "actor"],
  ["SVC_LIMIT_WRITES_PER_IP", "write", "aggregate-ip"],
  ["SVC_LIMIT_READS_PER_ACTOR", "read", "actor"],
  ["SVC_LIMIT_READS_PER_TENANT", "read", "tenant"],
  ["SVC_LIMIT_READS_PER_IP", "read", "aggregate-ip"],
  ["SVC_LIMIT_PLAYBACK_PER_IP", "read", "ip"],
  ["SVC_LIMIT_UPLOADS_PER_ACTOR", "upload", "actor"],
  ["SVC_LIMIT_UPLOADS_PER_IP", "upload", "aggregate-ip"],
];
const policyAt = (policies: RateLimitPolicies, cls: keyof RateLimitPolicies, key: string) =>
  String((policies[cls] as Record<string, unknown>)[key]);

describe("every rate limit is a row of the variable table", () => {
  it("the limits' rows are exactly these eight, in the `limits` scope", () => {
    expect(configVariables.filter((row) => row.scopes.includes("limits")).map((row) => row.name).sort()).toEqual(
      limitVariables.map(([name]) => name).sort(),
    );
  });

  it.each(limitVariables)("%s sets the %s limit keyed on %s, and no other", (name, cls, key) => {
    const config = parseConfig({ ...requiredEnv, [name]: "7/7s" }, quiet);
    for (const [, otherCls, otherKey] of limitVariables) {
      const expected = otherCls === cls && otherKey === key ? "7/7s" : policyAt(rateLimitPolicies, otherCls, otherKey);
      expect(policyAt(config.rateLimits, otherCls, otherKey), `${otherCls} ${otherKey}`).toBe(expected);
    }
  });

  it("unset, every limit is the interface's", () => {
    expect(parseConfig(requiredEnv, quiet).rateLimits).toEqual(rateLimitPolicies);
  });

  it("a rate-limited route's function reads the limits (reads, playback, uploads); an unlimited route's (health) is given none", () => {
    for (const route of [getPost, getAudio, uploadAudio]) {
      expect(variablesOf(routeScopes(route)).map((row) => row.name)).toEqual(expect.arrayContaining(limitVariables.map(([name]) => name)));
    }
    expect(variablesOf(routeScopes(health)).filter((row) => row.scopes.includes("limits"))).toEqual([]);
    const config = parseConfig({ ...requiredEnv, SVC_LIMIT_READS_PER_ACTOR: "2/1m" }, quiet, routeScopes(getPost));
    expect(String(config.rateLimits.read.actor)).toBe("2/1m");
  });
});
