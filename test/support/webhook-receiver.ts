import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The raw bytes as sent. */
  body: Buffer;
  json: { postId: string; originAppId: string; stage: string; status: string; occurredAt: string };
  at: number;
}

export interface WebhookAnswer {
  status: number;
  location?: string;
  delayMs?: number;
  /** Hold the request open until this settles (a hanging receiver), then answer. */
  until?: Promise<unknown>;
}

/**
 * A tenant's webhook endpoint on loopback. `respond` picks each answer (status, optional Location, optional delay,
 * optional hold); by default every delivery gets 200. `open()` counts requests it holds unanswered and still
 * connected; `arrived(n)` resolves once n deliveries have arrived.
 */
export const startWebhookReceiver = async (respond: (hook: ReceivedWebhook, index: number) => WebhookAnswer = () => ({ status: 200 })) => {
  const received: ReceivedWebhook[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let open = 0;
  const server = createServer((req, res) => {
    open++;
    res.on("close", () => open--);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const hook = { headers: req.headers, body, json: JSON.parse(body.toString("utf8")), at: Date.now() };
      received.push(hook);
      for (const w of waiters.filter((w) => received.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = respond(hook, received.length - 1);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.location ? { Location: answer.location } : {});
        res.end();
      };
      if (answer.until) void answer.until.finally(send);
      else if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    open: () => open,
    arrived: (n: number) => (received.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
