import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { localEnvironment } from "./environment";
import { loadEnvFile, parseEnvFile } from "./load-env-file";
import { readVariables } from "./read-variables";

const dir = mkdtempSync(join(tmpdir(), "env-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loadEnvFile", () => {
  it("reads KEY=VALUE lines, skipping comments and blank lines and unwrapping quotes", () => {
    expect(
      parseEnvFile(
        [
          "# a comment",
          "",
          "PLAIN=value",
          "SPACED = padded  ",
          'DOUBLE="two words # not a comment"',
          "SINGLE='x=y'",
          "INLINE=kept#hash # trailing comment",
          "export EXPORTED=yes",
          "EMPTY=",
          "DID=demo:did:web:localhost%3A3000",
          "not a line",
        ].join("\r\n"),
      ),
    ).toEqual({
      PLAIN: "value",
      SPACED: "padded",
      DOUBLE: "two words # not a comment",
      SINGLE: "x=y",
      INLINE: "kept#hash",
      EXPORTED: "yes",
      EMPTY: "",
      DID: "demo:did:web:localhost%3A3000",
    });
  });

  it("a variable already in the environment wins over the file", () => {
    const path = join(dir, "wins.env");
    writeFileSync(path, "A=from-file\nB=from-file\nC=from-file\n");
    const env: NodeJS.ProcessEnv = { A: "from-env", C: "" };
    expect(loadEnvFile(path, env)).toBe(env);
    expect(env).toEqual({ A: "from-env", B: "from-file", C: "" });
  });

  it("a missing file is fine", () => {
    const env: NodeJS.ProcessEnv = { A: "1" };
    loadEnvFile(join(dir, "absent.env"), env);
    expect(env).toEqual({ A: "1" });
  });
});

describe("localEnvironment", () => {
  const file = join(dir, "local.env");
  writeFileSync(file, "SVC_APP_TOKENS=demo:dev-demo-token-0000000000000000000000000000\nPORT=3000\n");

  it("fills what the environment leaves unset from local.env in development", () => {
    expect(localEnvironment({ PORT: "4000" }, file)).toEqual({ PORT: "4000", SVC_APP_TOKENS: "demo:dev-demo-token-0000000000000000000000000000" });
  });

  it("with NODE_ENV=production reads no local.env: an unset token stays unset rather than becoming the published demo token", () => {
    expect(localEnvironment({ NODE_ENV: "production", PORT: "4000" }, file)).toEqual({ NODE_ENV: "production", PORT: "4000" });
  });

  it.each(["production ", " production", "\tproduction\n"])(
    "a NODE_ENV the configuration reads as production (%j, spaces around it) reads no local.env either",
    (nodeEnv) => {
      const env = { NODE_ENV: nodeEnv, PORT: "4000" };
      expect(readVariables(env, () => undefined)("NODE_ENV")).toBe("production");
      expect(localEnvironment({ ...env }, file)).toEqual(env);
    },
  );
});
