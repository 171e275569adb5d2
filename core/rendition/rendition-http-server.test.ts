/** The rendition service's HTTP server on its own, with a stand-in for the service behind it. */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRenditionHttpServer, maxReadBytes } from "./rendition-http-server";
import type { RenditionHttpRequest, RenditionService } from "./rendition-service";

const seen: RenditionHttpRequest[] = [];
const refuseAll: RenditionService = async (request) => {
  seen.push(request);
  return { status: 401, headers: { "Content-Type": "application/json" }, body: '{"success":false}' };
};
const server = createRenditionHttpServer(refuseAll);
let port: number;
beforeAll(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the rendition service's HTTP server", () => {
  it("reads no more than a bounded part of a body it will refuse: a caller sending 64 MiB without a token is cut off, and its refusal still logged", async () => {
    const declared = 64 * 2 ** 20;
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.on("error", () => {});
    socket.write(`POST /v1/normalize HTTP/1.1\r\nHost: rendition\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`);
    const chunk = Buffer.alloc(2 ** 20, 0x20);
    let sent = 0;
    let open = true;
    // Not events.once: the reset that ends the write is an 'error' first, which once() would reject with.
    const closed = new Promise<void>((resolve) => socket.once("close", () => ((open = false), resolve())));
    const drained = () => new Promise<void>((resolve) => socket.once("drain", resolve));
    while (open && sent < declared) {
      if (!socket.write(chunk)) await Promise.race([drained(), closed]);
      sent += chunk.length;
    }
    socket.destroy();
    // What the kernel's buffers take beyond what the server read is a few MiB at most; read whole, all 64 went.
    expect(sent).toBeLessThan(declared / 4);
    await expect.poll(() => seen.length).toBe(1);
    expect(Buffer.byteLength(seen[0]!.body)).toBeLessThanOrEqual(maxReadBytes);
  });
});
