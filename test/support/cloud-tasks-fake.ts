import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface CreatedTask {
  path: string;
  authorization: string | undefined;
  httpRequest: { httpMethod: string; url: string; headers: Record<string, string>; body: string };
  /** How long Cloud Tasks waits for the target's answer (a Duration, `930s`); 10 minutes when absent. */
  dispatchDeadline?: string;
  /** Status of each call the fake made to the task's URL. */
  attempts: number[];
  /** The `Retry-After` each of those answers carried (Cloud Tasks considers it on a 429 or 503). */
  retryAfter: (string | null)[];
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};

/**
 * A local stand-in for Google Cloud Tasks speaking its REST API: `POST /v2/projects/{p}/locations/{l}/queues/{q}/tasks`
 * creates an HTTP task, which it then delivers like Cloud Tasks does (its method, headers and base64 body to its
 * URL, with the `X-CloudTasks-TaskRetryCount` and `X-CloudTasks-TaskExecutionCount` headers), retrying non-2xx
 * answers with a short backoff. It also answers the metadata server's token and project routes.
 */
export const startCloudTasksFake = async (opts: { accessToken: string; retryDelayMs?: number; maxAttempts?: number }) => {
  const tasks: CreatedTask[] = [];
  const deliveries: Promise<void>[] = [];
  const deliver = async (task: CreatedTask) => {
    for (let i = 0; i < (opts.maxAttempts ?? 10); i++) {
      let status = 0; // unreachable target
      let retryAfter: string | null = null;
      try {
        const res = await fetch(task.httpRequest.url, {
          method: task.httpRequest.httpMethod,
          // Cloud Tasks numbers the attempts it makes: 0 on the first.
          headers: { ...task.httpRequest.headers, "X-CloudTasks-TaskRetryCount": String(i), "X-CloudTasks-TaskExecutionCount": String(task.attempts.filter((a) => a !== 0).length) },
          body: Buffer.from(task.httpRequest.body, "base64"),
          redirect: "manual",
        });
        await res.body?.cancel();
        status = res.status;
        retryAfter = res.headers.get("retry-after");
      } catch {}
      task.attempts.push(status);
      task.retryAfter.push(retryAfter);
      if (status >= 200 && status < 300) return;
      await new Promise((r) => setTimeout(r, opts.retryDelayMs ?? 100));
    }
  };
  const server = createServer(async (req, res) => {
    const url = req.url ?? "/";
    if (url === "/computeMetadata/v1/instance/service-accounts/default/token" && req.headers["metadata-flavor"] === "Google") {
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ access_token: opts.accessToken, expires_in: 3599, token_type: "Bearer" }));
      return;
    }
    if (url === "/computeMetadata/v1/project/project-id" && req.headers["metadata-flavor"] === "Google") {
      res.writeHead(200, { "Content-Type": "text/plain" }).end("metadata-project");
      return;
    }
    const match = /^\/v2\/projects\/[^/]+\/locations\/[^/]+\/queues\/[^/]+\/tasks$/.exec(url);
    if (req.method !== "POST" || !match) {
      res.writeHead(404).end();
      return;
    }
    if (req.headers.authorization !== `Bearer ${opts.accessToken}`) {
      res.writeHead(401, { "Content-Type": "application/json" }).end(JSON.stringify({ error: { code: 401, status: "UNAUTHENTICATED" } }));
      return;
    }
    const body = JSON.parse(await readBody(req)) as { task: { httpRequest: CreatedTask["httpRequest"]; dispatchDeadline?: string } };
    const task: CreatedTask = { path: url, authorization: req.headers.authorization, httpRequest: body.task.httpRequest, dispatchDeadline: body.task.dispatchDeadline, attempts: [], retryAfter: [] };
    tasks.push(task);
    const name = `${url}/${tasks.length}`.replace(/^\/v2\//, "");
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ name, httpRequest: body.task.httpRequest, dispatchCount: 0 }));
    deliveries.push(deliver(task));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    tasks,
    settled: () => Promise.all(deliveries),
    async close() {
      await Promise.allSettled(deliveries);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
