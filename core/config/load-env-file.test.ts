import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadEnvFile, parseEnvFile } from "./load-env-file";

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
