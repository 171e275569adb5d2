/**
 * `npm start`'s process stopping (SIGTERM) while a request is still being answered: the request's own cleanup runs
 * before the process exits, so a stalled upload cut off by the shutdown leaves no staging file behind.
 */
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startDidServer } from "./support/did-server";
import { nodeServerOnFreePort, oneTenantEnv } from "./support/node-server-process";

const token = "shutdown-token-0123456789abcdef0123456789";

describe("shutting down npm start's process", () => {
  it("an upload stalled when SIGTERM comes is cut off at the idle timeout and its staging file removed before the process exits", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "svc-shutdown-"));
    const dids = await startDidServer();
    dids.publish("tenant", "pds.test");
    const { port, start } = await nodeServerOnFreePort();
    const child = start({
      ...oneTenantEnv({ port, dir, token, did: dids.didOf("tenant") }),
      SVC_IDLE_TIMEOUT_MS: "1500",
    });
    const exited = once(child, "exit");
    try {
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await expect.poll(() => output.includes('"message":"listening"'), { timeout: 45_000 }).toBe(true);

      // An upload that says it is 200 kB and stops after its first 64 KiB.
      const boundary = "stalled";
      const socket = connect(port, "127.0.0.1");
      socket.on("error", () => {});
      await once(socket, "connect");
      socket.write(
        `POST /api/v1/audio/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nX-Svc-Acting-Actor: staller\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 200000\r\n\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
      );
      const wav = Buffer.alloc(64 * 1024);
      wav.write("RIFF", 0);
      wav.writeUInt32LE(200_000, 4);
      wav.write("WAVEfmt ", 8);
      socket.write(wav);
      const staging = () => readdir(path.join(dir, "blobs", "staging")).catch(() => [] as string[]);
      await expect.poll(async () => (await staging()).length, { timeout: 5_000 }).toBeGreaterThan(0);

      child.kill("SIGTERM");
      expect((await exited)[0]).toBe(0);
      expect(await staging()).toEqual([]);
      expect(output).toMatch(/"route":"upload-audio"/);
    } finally {
      child.kill("SIGKILL");
      await dids.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
