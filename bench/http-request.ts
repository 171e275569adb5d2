/** The benchmark's HTTP client: keep-alive connections to the server, a pool per port. */
import http from "node:http";

const agents = new Map<number, http.Agent>();
const agentFor = (port: number) => {
  let agent = agents.get(port);
  if (!agent) agents.set(port, (agent = new http.Agent({ keepAlive: true, maxSockets: 64 })));
  return agent;
};

export function request(options: {
  port: number;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** `false`: a connection of its own (default: the port's keep-alive agent). */
  agent?: false;
}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const agent = options.agent ?? agentFor(options.port);
    const req = http.request(
      { host: "127.0.0.1", port: options.port, method: options.method, path: options.path, headers: options.headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Closes the kept-alive connections, so the process can end. */
export const closeConnections = () => {
  for (const agent of agents.values()) agent.destroy();
};
