import type { IncomingMessage, ServerResponse } from "node:http";
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from "../../client/src/index";
import { readBody, sendJson } from "./http-exchange";

/**
 * Stage settles, live: the service's webhooks come in at POST /webhooks, are verified over their raw bytes and
 * deduplicated on the event id, then pushed to every open page as server-sent events. A page reconciles from GET
 * (the post's `processing` is authoritative; the event only says when to look).
 */
export const liveSettles = (webhookSecret: string) => {
  const pages = new Set<ServerResponse>();
  const seen = new Set<string>();

  const heartbeat = setInterval(() => {
    for (const page of pages) page.write(": keep-alive\n\n");
  }, 25_000);
  heartbeat.unref();

  const push = (event: WebhookEvent) => {
    const { eventId, postId, stage, status, occurredAt } = event;
    const message = `id: ${eventId}\nevent: settle\ndata: ${JSON.stringify({ postId, stage, status, occurredAt })}\n\n`;
    for (const page of pages) page.write(message);
  };

  return {
    /** GET /api/events: one page's stream. */
    subscribe(req: IncomingMessage, res: ServerResponse) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
      res.write(": connected\n\n");
      pages.add(res);
      req.on("close", () => pages.delete(res));
    },

    /** POST /webhooks: the service's delivery. A bad signature is refused, a repeat acknowledged and dropped. */
    async receive(req: IncomingMessage, res: ServerResponse) {
      const raw = await readBody(req, 64 * 1024);
      let event: WebhookEvent;
      try {
        event = await verifyWebhook(raw, req.headers, webhookSecret);
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        return sendJson(res, 400, { error: { code: "BAD_SIGNATURE", message: error.message } });
      }
      if (!seen.has(event.eventId)) {
        // The last 10,000 ids: far more than a demo receives within the signature's 5-minute window.
        if (seen.size >= 10_000) seen.delete(seen.values().next().value!);
        seen.add(event.eventId);
        push(event);
      }
      sendJson(res, 200, { received: true });
    },

    close() {
      clearInterval(heartbeat);
      for (const page of pages) page.end();
      pages.clear();
    },
  };
};
