import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * What the proxy does to one request instead of passing it through:
 * - `status`: answers it itself (not forwarded), as a gateway or a limiter in front of the service would;
 * - `lose-answer`: forwards it, lets the service answer, then cuts the connection before the answer gets back;
 * - `hold`: forwards nothing and never answers (the client's timeout must end it);
 * - `reset`: cuts the connection at once;
 * - `drop`: forwards it, then cuts the connection `afterMs` after the request's body arrived, while the service may
 *   still be working on it (it runs on; its answer goes nowhere);
 * - `gateway-timeout`: forwards it, then answers 504 itself `afterMs` after the request's body arrived, as API Gateway
 *   does at its integration timeout while the function runs on.
 */
export type Fault =
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: string }
  | { kind: "lose-answer" }
  | { kind: "hold" }
  | { kind: "reset" }
  | { kind: "drop"; afterMs: number }
  | { kind: "gateway-timeout"; afterMs: number };

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  fault: Fault["kind"] | "none";
  /** The service's status, for a request passed through. */
  answered?: number;
}

/**
 * An HTTP proxy on loopback in front of a real service (`target`, or a function naming it once it is known), whose
 * network fails on demand: `inject(match, ...faults)`
 * applies the faults, in order, to the next requests that match. Every request is recorded in `seen`.
 */
export const startFaultProxy = async (target: string | (() => string)) => {
  const seen: SeenRequest[] = [];
  const plans: { match: (method: string, path: string) => boolean; faults: Fault[] }[] = [];
  const held = new Set<ServerResponse>();

  const forward = (req: IncomingMessage, res: ServerResponse, loseAnswer: boolean, record: SeenRequest) => {
    const url = new URL(req.url!, typeof target === "string" ? target : target());
    const upstream = request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
      record.answered = answer.statusCode;
      if (loseAnswer) {
        answer.resume();
        answer.on("end", () => res.socket?.destroy());
        return;
      }
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.socket?.destroy());
    req.pipe(upstream);
  };

  const server = createServer((req, res) => {
    const path = req.url!;
    const plan = plans.find((p) => p.faults.length > 0 && p.match(req.method!, path));
    const fault = plan?.faults.shift();
    const record: SeenRequest = { method: req.method!, path, headers: req.headers, fault: fault?.kind ?? "none" };
    seen.push(record);
    if (!fault) return forward(req, res, false, record);
    switch (fault.kind) {
      case "lose-answer":
        return forward(req, res, true, record);
      case "status":
        req.resume();
        res.writeHead(fault.status, { "content-type": "application/json", ...fault.headers });
        return res.end(fault.body ?? JSON.stringify({ message: "injected" }));
      case "hold":
        req.resume();
        held.add(res);
        return;
      case "reset":
        return req.socket.destroy();
      case "drop":
        forward(req, res, true, record);
        return req.on("end", () => setTimeout(() => req.socket.destroy(), fault.afterMs));
      case "gateway-timeout":
        forward(req, res, true, record);
        return req.on("end", () =>
          setTimeout(() => {
            res.writeHead(504, { "content-type": "application/json", connection: "close" });
            res.end(JSON.stringify({ message: "Service Unavailable" }));
          }, fault.afterMs),
        );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    /** Faults for the next requests whose method and path (with query) match. */
    inject(match: { method?: string; path?: string | RegExp }, ...faults: Fault[]) {
      plans.push({
        match: (method, path) =>
          (match.method === undefined || match.method === method) &&
          (match.path === undefined || (typeof match.path === "string" ? path.split("?")[0] === match.path : match.path.test(path))),
        faults,
      });
    },
    /** The requests seen for a method and path. */
    to(method: string, path: string | RegExp) {
      return seen.filter((s) => s.method === method && (typeof path === "string" ? s.path.split("?")[0] === path : path.test(s.path)));
    },
    async close() {
      for (const res of held) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

export type FaultProxy = Awaited<ReturnType<typeof startFaultProxy>>;
