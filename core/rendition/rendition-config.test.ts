import { describe, expect, it } from "vitest";
import { requiredEnv } from "../../test/support/config-env";
import { parseConfig } from "../config/parse-config";
import { parseRenditionConfig } from "./rendition-config";

const system = "s".repeat(40);
const withLog = () => {
  const errors: string[] = [];
  return { errors, log: { error: (message: string) => void errors.push(message), warn: () => {} } };
};

describe("the rendition service's token", () => {
  it.each([
    ["unset", undefined],
    ["whitespace only", "   "],
    ["21 characters", "short-rendition-token"],
    ["31 characters", "r".repeat(31)],
    ["32 characters", "r".repeat(32)],
    ["40 characters", "r".repeat(40)],
  ])(
    "is the token the service sends, for the same environment (RENDITION_SERVICE_TOKEN %s): under 32 characters both fall back to SYSTEM_AUTH_TOKEN, with the same log line",
    (_label, own) => {
      const env = { ...requiredEnv, SYSTEM_AUTH_TOKEN: system, SVC_RENDITION_SERVICE_URL: "http://127.0.0.1:3001", ...(own !== undefined && { RENDITION_SERVICE_TOKEN: own }) };
      const service = withLog();
      const rendition = withLog();
      const sent = parseConfig(env, service.log).rendition?.token;
      const accepted = parseRenditionConfig(env, rendition.log).token;
      expect(sent).toBeDefined();
      expect(accepted).toBe(sent);
      expect(accepted).toBe(own !== undefined && own.length >= 32 ? own : system);
      expect(rendition.errors).toEqual(service.errors);
      if (own !== undefined && own.trim() !== "" && own.length < 32) {
        expect(rendition.errors).toEqual([expect.stringContaining("RENDITION_SERVICE_TOKEN is shorter than 32")]);
        expect(rendition.errors.join()).not.toContain(own);
      }
    },
  );

  it("a short SYSTEM_AUTH_TOKEN, with no usable RENDITION_SERVICE_TOKEN, is ignored with an error log: every route answers 503", () => {
    const { errors, log } = withLog();
    expect(parseRenditionConfig({ SVC_BLOB_DIR: "/tmp/blobs", SYSTEM_AUTH_TOKEN: "short", RENDITION_SERVICE_TOKEN: "tiny" }, log).token).toBeUndefined();
    expect(errors).toEqual([expect.stringContaining("RENDITION_SERVICE_TOKEN is shorter"), expect.stringContaining("SYSTEM_AUTH_TOKEN is shorter")]);
  });
});
