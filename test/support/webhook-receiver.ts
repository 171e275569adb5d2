import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  /** The raw bytes as sent. */
  body: Buffer;
  json: { postId: string; originAppId: string; stage: string; status: string; occurredAt: string };
  at: number;
}

/**
 * A tenant's webhook endpoint on loopback. `respond` picks each answer (status, optional Location, optional delay);
 * by default every delivery gets 200.
 */
export const startWebhookReceiver = async (
  respond: (hook: ReceivedWebhook, index: number) => { status: number; location?: string; delayMs?: number } = () => ({ status: 200 }),
) => {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const hook = { headers: req.headers, body, json: JSON.parse(body.toString("utf8")), at: Date.now() };
      received.push(hook);
      const answer = respond(hook, received.length - 1);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.location ? { Location: answer.location } : {});
        res.end();
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
