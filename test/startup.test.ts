import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../core/config/parse-config";
import { loadEnvFile } from "../core/config/load-env-file";
import { configVariables } from "../core/config/variables";
import { nodeServerOnFreePort } from "./support/node-server-process";

const root = fileURLToPath(new URL("..", import.meta.url));
const quiet = { error() {}, warn() {} };
const valid = {
  DATABASE_URL: "pglite://memory",
  SVC_BLOB_DIR: ".data/blobs",
  SVC_PUBLIC_BASE_URL: "http://localhost:3000",
  SVC_PDS_HOST: "localhost:3000",
  SVC_PLAYBACK_SIGNING_KEY: "p".repeat(40),
};

function problemFor(env: Record<string, string | undefined>): ConfigError {
  try {
    parseConfig(env, quiet);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("parseConfig accepted the environment");
}

describe("startup configuration", () => {
  it.each(configVariables.filter((v) => v.required).map((v) => v.name))("a missing %s stops startup naming it", (name) => {
    for (const missing of [undefined, "", "   "]) {
      const err = problemFor({ ...valid, [name]: missing });
      expect(err.message).toContain(name);
      expect(err.problems.map((p) => p.variable)).toEqual([name]);
    }
  });

  it("a missing blob store (neither SVC_BLOB_DIR nor SVC_BLOB_BUCKET) stops startup naming both", () => {
    const err = problemFor({ ...valid, SVC_BLOB_DIR: undefined });
    expect(err.message).toContain("SVC_BLOB_DIR or SVC_BLOB_BUCKET is required");
  });

  const invalid: [string, string][] = [
    ["DATABASE_URL", "mysql://db/x"],
    ["DATABASE_URL", "pglite://"],
    ["DATABASE_URL", "rds-data://db?resourceArn=r"],
    ["DATABASE_URL", "/just/a/path"],
    ["SVC_PUBLIC_BASE_URL", "localhost:3000"],
    ["SVC_PUBLIC_BASE_URL", "ftp://example.com"],
    ["SVC_PUBLIC_BASE_URL", "/relative"],
    ["SVC_PUBLIC_BASE_URL", "https://example.com/?a=b"],
    ["SVC_PDS_HOST", "https://pds.example.com"],
    ["SVC_PDS_HOST", "pds.example.com/path"],
    ["SVC_PDS_HOST", "pds.example.com:notaport"],
    ["SVC_PLAYBACK_SIGNING_KEY", "p".repeat(31)],
    ["TRUSTED_PROXY_HOPS", "-1"],
    ["TRUSTED_PROXY_HOPS", "1.5"],
    ["TRUSTED_PROXY_HOPS", "two"],
    ["CLIENT_IP_SOURCE", "cf-connecting-ip"],
    ["LOG_LEVEL", "verbose"],
    ["PORT", "80a"],
    ["PORT", "65536"],
    ["RENDITION_PORT", "-1"],
    ["SVC_LIMIT_READS_PER_ACTOR", "60"],
    ["SVC_LIMIT_READS_PER_TENANT", "600/1d"],
    ["SVC_LIMIT_READS_PER_IP", "0/1m"],
    ["SVC_LIMIT_WRITES_PER_ACTOR", "10 per 15m"],
    ["SVC_LIMIT_WRITES_PER_IP", "120/15min"],
    ["SVC_LIMIT_UPLOADS_PER_ACTOR", "20/1.5h"],
    ["SVC_LIMIT_UPLOADS_PER_IP", "100000/1m"],
    ["SVC_LIMIT_PLAYBACK_PER_IP", "60/25h"],
  ];
  it.each(invalid)("an invalid %s (%s) stops startup naming it", (name, value) => {
    const err = problemFor({ ...valid, [name]: value });
    expect(err.problems.map((p) => p.variable)).toEqual([name]);
    expect(err.message).toContain(name);
  });

  it("the committed local.env is a complete, valid development configuration", () => {
    const config = parseConfig(loadEnvFile(`${root}/local.env`, {}), {
      error: (msg) => {
        throw new Error(msg);
      },
      warn: (msg) => {
        throw new Error(msg);
      },
    });
    expect(config.production).toBe(false);
    expect(config.database).toEqual({ kind: "pglite", dir: ".data/pg" });
    expect(config.tenants.get("demo")).toMatchObject({ did: "did:web:localhost%3A3000" });
    expect(config.tenants.get("demo")?.token?.length).toBeGreaterThanOrEqual(40);
    expect(config.systemAuthToken).toBeDefined();
  });

  it("the process exits non-zero naming each missing variable", () => {
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ["--import", "tsx", "core/config/check-config.ts"], {
        cwd: root,
        env: { PATH: process.env.PATH ?? "", ...env },
        encoding: "utf8",
        timeout: 20_000,
      });
    const failed = run({ ...valid, DATABASE_URL: "", SVC_PLAYBACK_SIGNING_KEY: "tiny-key-xyz" });
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain("DATABASE_URL is required");
    expect(failed.stderr).toContain("SVC_PLAYBACK_SIGNING_KEY must be at least 32 characters");
    expect(failed.stderr).not.toContain("tiny-key-xyz");

    const ok = run(valid);
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);

    // A malformed rate limit stops the process too, naming the variable and how a limit is written.
    const badLimit = run({ ...valid, SVC_LIMIT_READS_PER_TENANT: "600 a minute" });
    expect(badLimit.status).toBe(1);
    expect(badLimit.stderr).toContain("SVC_LIMIT_READS_PER_TENANT must be <count>/<window>");
    expect(badLimit.stderr).toMatch(/expected: <count>\/<window>: .*; default 60\/1m/);
  });
});

/** `npm start`'s process on `env` until it logs "listening"; its log lines, and a stop that waits for its exit. */
async function startNodeServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "core/runtime/node/node-server.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "test", LOG_LEVEL: "info", HOST: "127.0.0.1", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (!output.includes('"message":"listening"')) return;
      clearInterval(poll);
      resolve();
    }, 20);
    child.once("exit", (code) => {
      clearInterval(poll);
      reject(new Error(`the server exited ${code}:\n${output}`));
    });
  });
  const lines = output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Record<string, unknown>);
  const stop = () => new Promise((resolve) => (child.kill("SIGTERM"), child.once("exit", resolve)));
  return { lines, stop };
}

describe("first start on PGlite", () => {
  it("npm start runs the server in node itself, with no tsx CLI process (about 45 MB) beside it", async () => {
    const scripts = (JSON.parse(await readFile(path.join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe("node --import tsx core/runtime/node/node-server.ts");
  });


  it("creates the data directory before the server loads, and a restart uses it as it is", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "svc-first-start-"));
    const env = { ...valid, DATABASE_URL: `pglite://${path.join(dir, "pg")}`, SVC_BLOB_DIR: path.join(dir, "blobs") } as Record<string, string>;
    try {
      const first = await startNodeServer(env);
      await first.stop();
      const created = first.lines.findIndex((line) => line.message === "created the PGlite data directory");
      expect(created).toBeGreaterThanOrEqual(0);
      expect(first.lines[created]).toMatchObject({ initdbPeakRssMb: expect.any(Number) });
      expect(created).toBeLessThan(first.lines.findIndex((line) => line.message === "listening"));

      const again = await startNodeServer(env);
      await again.stop();
      expect(again.lines.some((line) => line.message === "created the PGlite data directory")).toBe(false);
      expect(again.lines.some((line) => line.message === "listening")).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe("a parent that bound the address already", () => {
  it("hands its listening socket to npm start's process, which serves on it: the port never goes free in between", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "svc-inherited-"));
    const { port, start } = await nodeServerOnFreePort();
    const child = start({ PATH: process.env.PATH ?? "", NODE_ENV: "test", LOG_LEVEL: "info", ...valid, SVC_BLOB_DIR: path.join(dir, "blobs") });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let output = "";
        child.stdout!.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split("\n").find((l) => l.includes('"message":"listening"'));
          if (line) resolve(JSON.parse(line));
        });
        child.once("exit", (code) => reject(new Error(`the server exited ${code}:\n${output}`)));
      });
      expect(listening.url).toBe(`http://127.0.0.1:${port}`);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
