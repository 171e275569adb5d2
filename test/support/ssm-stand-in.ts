import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for the parts of AWS Systems Manager the functions call: `GetParameters` (JSON 1.1 protocol),
 * answering from an in-memory path -> value map, with unknown names in `InvalidParameters` as SSM does.
 */
export interface SsmStandIn {
  endpoint: string;
  parameters: Map<string, string>;
  /** Each GetParameters call's names, in order. */
  calls: string[][];
  stop(): Promise<void>;
}

export const startSsmStandIn = async (parameters: Record<string, string> = {}): Promise<SsmStandIn> => {
  const store = new Map(Object.entries(parameters));
  const calls: string[][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
        res.end(JSON.stringify(body));
      };
      if (req.headers["x-amz-target"] !== "AmazonSSM.GetParameters") {
        return reply(400, { __type: "UnknownOperationException", message: String(req.headers["x-amz-target"]) });
      }
      const { Names = [] } = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { Names?: string[] };
      calls.push(Names);
      if (Names.length > 10) return reply(400, { __type: "ValidationException", message: "at most 10 names" });
      reply(200, {
        Parameters: Names.filter((n) => store.has(n)).map((Name) => ({ Name, Value: store.get(Name), Type: "SecureString", Version: 1 })),
        InvalidParameters: Names.filter((n) => !store.has(n)),
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    parameters: store,
    calls,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
};
