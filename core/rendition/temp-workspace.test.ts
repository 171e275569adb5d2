/** What a rendition service killed mid-operation leaves in its temp dir (a real `npm run rendition` process). */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blobKey } from "../blobs/blob-key";
import { rawCid } from "../blobs/raw-cid";
import { noiseWav } from "../../test/support/seeded-audio";

const root = resolve(import.meta.dirname, "../..");
const token = "temp-workspace-test-token-0123456789abcdef";

let dir: string;
let temp: string;
const running = new Set<ChildProcess>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "workspace-debris-"));
  temp = join(dir, "tmp");
  await mkdir(temp);
});
afterAll(async () => {
  for (const child of running) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

/** `npm run rendition` with its temp dir in `temp`; resolves with its port once it listens. */
const startService = async (): Promise<{ child: ChildProcess; url: string }> => {
  const child = spawn(process.execPath, ["--import", "tsx", "core/rendition/rendition-main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH, NODE_ENV: "test", TMPDIR: temp, SVC_BLOB_DIR: join(dir, "blobs"), SYSTEM_AUTH_TOKEN: token, RENDITION_PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /"url":"(http:[^"]+)"/.exec(output);
      if (found) resolve(found[1]!);
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    child.once("exit", () => reject(new Error(`rendition service exited:\n${output}`)));
  });
  return { child, url };
};

const workspaces = async () => (await readdir(temp)).filter((name) => name.startsWith("rendition-"));

describe("rendition workspaces", () => {
  it("a workspace left by a rendition service killed mid-operation is removed when the service starts again; a live process's is kept", async () => {
    // A long clip, so the normalize is still running when the service is killed.
    const wav = noiseWav(5 * 60_000, 48_000);
    const cid = rawCid(wav);
    await mkdir(join(dir, "blobs", "blobs", "demo"), { recursive: true });
    await writeFile(join(dir, "blobs", ...blobKey("demo", cid).split("/")), wav);
    // Another process's workspace that is still in use (this test's own process stands in for it).
    const live = join(temp, `rendition-${process.pid}-inuse`);
    await mkdir(live);

    const first = await startService();
    const answered = fetch(`${first.url}/v1/normalize`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ appId: "demo", cid, mimeType: "audio/wav" }),
    }).then((res) => res.status, () => "gone");
    await expect.poll(async () => (await workspaces()).length, { timeout: 20_000, interval: 50 }).toBe(2);
    first.child.kill("SIGKILL");
    expect(await answered).toBe("gone");
    const left = (await workspaces()).filter((name) => join(temp, name) !== live);
    expect(left).toHaveLength(1);

    const second = await startService();
    // Removed before it serves: a copy of the source and the output of every run killed, otherwise kept for good.
    expect(await workspaces()).toEqual([`rendition-${process.pid}-inuse`]);
    second.child.kill("SIGKILL");
  }, 60_000);
});
