/**
 * `npm start`'s process (and the rendition service) stopping while a keep-alive client keeps sending requests: every
 * answer from then on carries `Connection: close`, so the client's connection ends after its request in flight and
 * the shutdown completes (Node's server.close() ends only idle connections, and a busy one was kept alive forever).
 */
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger } from "../core/observability/logger";
import { parseRenditionConfig } from "../core/rendition/rendition-config";
import { startRendition } from "../core/rendition/rendition-node-root";
import { startDidServer } from "./support/did-server";
import { nodeServerOnFreePort, oneTenantEnv } from "./support/node-server-process";

const token = "shutdown-keep-alive-token-0123456789abcdef";

/** Whether a new connection to the port is refused: the server no longer listens. */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = connect(port, "127.0.0.1");
    probe.once("connect", () => (probe.destroy(), resolve(false)));
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });

/** A keep-alive client on one connection, and the answers the server sent on it (head and body each). */
const keepAliveClient = async (port: number) => {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  const closed = once(socket, "close");
  await once(socket, "connect");
  // A body (JSON) never holds a status line.
  const answers = () => text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((answer) => answer.startsWith("HTTP/1.1 "));
  return { socket, closed, answers };
};

describe("shutting down npm start's process under a keep-alive client", () => {
  it("a client sending a request a second on one keep-alive connection gets Connection: close on its next answer, and the process exits", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "svc-shutdown-keep-alive-"));
    const dids = await startDidServer();
    dids.publish("tenant", "pds.test");
    const { port, start } = await nodeServerOnFreePort();
    const child = start({
      ...oneTenantEnv({ port, dir, token, did: dids.didOf("tenant") }),
    });
    const exited = once(child, "exit");
    let ticker: NodeJS.Timeout | undefined;
    try {
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await expect.poll(() => output.includes('"message":"listening"'), { timeout: 45_000 }).toBe(true);

      const { socket, closed, answers } = await keepAliveClient(port);
      const request = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
      socket.write(request);
      await expect.poll(() => answers().length, { timeout: 5_000 }).toBe(1);
      expect(answers()[0]).toMatch(/^Connection: keep-alive\r$/im);

      // A request under way when SIGTERM comes (its first line read by the server): the connection is busy, not
      // idle, so the shutdown does not simply close it. The rest follows once the server no longer listens. A second
      // for the child (another process, on a loaded machine) to have read that line.
      socket.write("GET /health HTTP/1.1\r\n");
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      child.kill("SIGTERM");
      await expect.poll(() => refused(port), { timeout: 5_000 }).toBe(true);
      socket.write("Host: x\r\n\r\n");
      // The client goes on sending one a second for as long as its connection lasts.
      ticker = setInterval(() => socket.writable && socket.write(request), 1_000);

      await expect.poll(() => answers().length, { timeout: 5_000 }).toBe(2);
      expect(answers()[1]).toMatch(/^HTTP\/1\.1 200/);
      expect(answers()[1]).toMatch(/^Connection: close\r$/im);
      await closed;
      expect(answers()).toHaveLength(2);
      expect((await exited)[0]).toBe(0);
    } finally {
      clearInterval(ticker);
      child.kill("SIGKILL");
      await dids.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe("shutting down the rendition service under a keep-alive caller", () => {
  it("a caller sending a request a second on one keep-alive connection gets Connection: close on its next answer, and close() completes", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "rendition-shutdown-keep-alive-"));
    const logger = createLogger("silent");
    const config = parseRenditionConfig({ SVC_BLOB_DIR: path.join(dir, "blobs"), RENDITION_SERVICE_TOKEN: token, RENDITION_PORT: "0" }, logger);
    const running = await startRendition(config, logger);
    const port = Number(new URL(running.url).port);
    let ticker: NodeJS.Timeout | undefined;
    try {
      const { socket, closed, answers } = await keepAliveClient(port);
      // No token: a 401, answered at once.
      const request = "POST /v1/waveform HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
      socket.write(request);
      await expect.poll(() => answers().length, { timeout: 5_000 }).toBe(1);
      expect(answers()[0]).toMatch(/^Connection: keep-alive\r$/im);

      // As above: a request under way when the shutdown starts, and the caller going on after it.
      socket.write("POST /v1/waveform HTTP/1.1\r\n");
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopped = running.close();
      await expect.poll(() => refused(port), { timeout: 5_000 }).toBe(true);
      socket.write("Host: x\r\nContent-Length: 2\r\n\r\n{}");
      ticker = setInterval(() => socket.writable && socket.write(request), 1_000);

      await expect.poll(() => answers().length, { timeout: 5_000 }).toBe(2);
      expect(answers()[1]).toMatch(/^HTTP\/1\.1 401/);
      expect(answers()[1]).toMatch(/^Connection: close\r$/im);
      await closed;
      await stopped;
      expect(answers()).toHaveLength(2);
    } finally {
      clearInterval(ticker);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
