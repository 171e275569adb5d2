import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export type ProxyMode = "forward" | "refuse" | "blackhole";

/**
 * A TCP proxy on a loopback port in front of `target`, whose network can fail on demand:
 * - `refuse()`: the port stops listening (connection refused) and open connections are reset, as when the database
 *   host is down;
 * - `blackhole()`: connections are accepted and nothing comes back, and open connections go silent (their bytes are
 *   held, as TCP holds unacknowledged data), as behind a dropped route or a stuck load balancer;
 * - `heal()`: everything flows again, held bytes included.
 */
export const startTcpProxy = async (target: { host: string; port: number }) => {
  let mode: ProxyMode = "forward";
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const held = new Set<Socket>();

  const forward = (client: Socket, upstream: Socket) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const silence = (client: Socket, upstream: Socket) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };

  const onConnection = (client: Socket) => {
    client.on("error", () => {});
    if (mode === "blackhole") {
      client.pause();
      held.add(client);
      client.once("close", () => held.delete(client));
      return;
    }
    const upstream = connect(target.port, target.host);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.once("close", drop);
    upstream.once("close", drop);
    forward(client, upstream);
  };

  let server: Server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const listen = async () => {
    if (server.listening) return;
    server = createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", resolve);
    });
  };
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));

  return {
    port,
    get mode() {
      return mode;
    },
    async refuse() {
      mode = "refuse";
      const closing = stopListening();
      for (const { client, upstream } of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      for (const socket of held) socket.resetAndDestroy();
      await closing;
    },
    async blackhole() {
      await listen();
      mode = "blackhole";
      for (const { client, upstream } of pairs) silence(client, upstream);
    },
    async heal() {
      await listen();
      mode = "forward";
      for (const { client, upstream } of pairs) {
        forward(client, upstream);
        client.resume();
        upstream.resume();
      }
      // Connections accepted while black-holed never reached the database: they are still waiting for it.
      for (const client of held) {
        held.delete(client);
        onConnection(client);
        client.resume();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      for (const socket of held) socket.destroy();
      await stopListening();
    },
  };
};

export type TcpProxy = Awaited<ReturnType<typeof startTcpProxy>>;
