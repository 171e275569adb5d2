/**
 * An HTTP proxy in front of an emulator that counts the requests passing through it by AWS action, so a benchmark
 * can say how many Data API calls, S3 requests and SQS requests one request of each kind costs.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** The action an AWS request names: the Data API's path, SQS's X-Amz-Target, S3's method and what it addresses. */
const actionOf = (service: "rds-data" | "s3" | "sqs", req: http.IncomingMessage): string => {
  const url = new URL(req.url ?? "/", "http://proxy");
  if (service === "rds-data") return url.pathname.replace(/^\//, "");
  if (service === "sqs") return String(req.headers["x-amz-target"] ?? url.searchParams.get("Action") ?? "?").replace(/^AmazonSQS\./, "");
  const onObject = url.pathname.split("/").filter(Boolean).length > 1;
  if (req.method === "PUT" && req.headers["x-amz-copy-source"]) return "CopyObject";
  if (req.method === "PUT") return onObject ? "PutObject" : "PutBucket";
  if (req.method === "POST") return url.searchParams.has("delete") ? "DeleteObjects" : "PostObject";
  if (req.method === "GET") return onObject ? "GetObject" : "ListObjects";
  if (req.method === "HEAD") return onObject ? "HeadObject" : "HeadBucket";
  if (req.method === "DELETE") return "DeleteObject";
  return `${req.method}`;
};

export interface CountingProxy {
  endpoint: string;
  /** Requests by action since the last take, and the count reset. */
  take(): Record<string, number>;
  close(): Promise<void>;
}

/**
 * `rewrite` changes a request body on its way (SQS names its queue by URL in the body, and fauxqs knows the URL
 * with its own port, not the proxy's).
 */
export const startCountingProxy = async (service: "rds-data" | "s3" | "sqs", target: string, rewrite?: (body: string) => string): Promise<CountingProxy> => {
  const upstream = new URL(target);
  let counts: Record<string, number> = {};
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const action = actionOf(service, req);
    counts[action] = (counts[action] ?? 0) + 1;
    // The Host header passes unchanged: a presigned S3 URL was signed over the proxy's host.
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    if (!rewrite) return void req.pipe(forward);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.from(rewrite(Buffer.concat(chunks).toString("utf8")));
      forward.setHeader("content-length", body.length);
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take() {
      const taken = counts;
      counts = {};
      return taken;
    },
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
