import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { createClient, stageNames, toWebVTT, type BlobRef, type ClientOptions, type PostView, type SvcClient } from "../../client/src/index";
import { appState } from "./app-state";
import { feedFor } from "./feed";
import { cookieOf, HttpError, readJson, sendError, sendJson } from "./http-exchange";
import { liveSettles } from "./live-settles";

export interface TenantAppOptions {
  /** The service, as the client reaches it. */
  service: Pick<ClientOptions, "baseUrl" | "token"> & Partial<ClientOptions>;
  /** The tenant's webhook secret (SVC_APP_WEBHOOK_SECRETS). */
  webhookSecret: string;
  /** A port, or a server already listening whose address to take over. */
  listen: { port: number; host?: string } | { handle: Server };
  /** Where the app keeps its prompt list; in memory when absent. */
  stateFile?: string;
}

const publicDir = path.join(import.meta.dirname, "public");
const staticFiles: Record<string, { file: string; type: string }> = {
  "/": { file: path.join(publicDir, "index.html"), type: "text/html; charset=utf-8" },
  "/app.js": { file: path.join(publicDir, "app.js"), type: "text/javascript; charset=utf-8" },
  "/player.js": { file: path.join(publicDir, "player.js"), type: "text/javascript; charset=utf-8" },
  "/dom.js": { file: path.join(publicDir, "dom.js"), type: "text/javascript; charset=utf-8" },
  "/style.css": { file: path.join(publicDir, "style.css"), type: "text/css; charset=utf-8" },
  // The waveform library from node_modules, served by the app: no CDN.
  "/vendor/wavesurfer.esm.js": { file: path.join(path.dirname(createRequire(import.meta.url).resolve("wavesurfer.js")), "wavesurfer.esm.js"), type: "text/javascript; charset=utf-8" },
};

const sessionCookie = "demo_user";

/**
 * A post with its captions (WebVTT by toWebVTT) beside it, made from the transcript the view already holds: a
 * captions URL per card would cost a service read each, and a feed load would spend the viewer's reads for the minute.
 */
const captioned = (post: PostView) => (post.embed?.transcript?.segments ? { ...post, captions: toWebVTT(post.embed.transcript) } : post);

/**
 * The reference tenant app: a backend-for-frontend on the client, and one page. The page signs in as a name (a demo
 * cookie the BFF maps to the acting actor), and never sees the service token: every call to the service is the BFF's.
 */
export const startTenantApp = async (options: TenantAppOptions) => {
  const svc = createClient(options.service);
  // The feed is many reads at once: a refusal (the viewer's reads for the minute spent) answers the page at once with
  // when to try again, rather than holding the request through the client's waits.
  const feedSvc = createClient({ ...options.service, maxRetries: 0 });
  const state = appState(options.stateFile);
  const live = liveSettles(options.webhookSecret);

  const viewerName = (req: IncomingMessage): string => {
    const name = cookieOf(req, sessionCookie);
    if (!name) throw new HttpError(401, "SIGN_IN", "sign in first");
    return name;
  };
  const viewer = (req: IncomingMessage): SvcClient => svc.as(viewerName(req));

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, id: string) => Promise<void>> = {
    "GET /api/session": async (req, res) => sendJson(res, 200, { name: cookieOf(req, sessionCookie) ?? null, stages: stageNames }),
    "POST /api/session": async (req, res) => {
      const { name } = await readJson<{ name?: unknown }>(req);
      if (typeof name !== "string" || !/^[\p{L}\p{N} ._-]{1,40}$/u.test(name.trim())) throw new HttpError(400, "BAD_NAME", "a name of 1 to 40 letters, digits, spaces, dots, dashes");
      sendJson(res, 200, { name: name.trim() }, { "set-cookie": `${sessionCookie}=${encodeURIComponent(name.trim())}; Path=/; HttpOnly; SameSite=Lax` });
    },
    "DELETE /api/session": async (_req, res) => sendJson(res, 200, { name: null }, { "set-cookie": `${sessionCookie}=; Path=/; Max-Age=0` }),
    // The recording's own type (audio/webm;codecs=opus from MediaRecorder) goes as is: the client drops the parameter.
    "POST /api/audio": async (req, res) => sendJson(res, 201, { blob: await viewer(req).uploadAudio(req, { mimeType: req.headers["content-type"] }) }),
    "POST /api/posts": async (req, res) => {
      const who = viewer(req);
      const { text = "", audio, replyTo } = await readJson<{ text?: string; audio?: BlobRef; replyTo?: string }>(req);
      const processing = Object.fromEntries(stageNames.map((stage) => [stage, true]));
      let reply;
      if (replyTo) {
        const parent = await who.getPost(replyTo);
        reply = { root: parent.record.reply?.root ?? { uri: parent.uri, cid: parent.cid }, parent: { uri: parent.uri, cid: parent.cid } };
      }
      const embed = audio && { $type: "dev.svc.embed.audio" as const, audio };
      const { postId } = await who.createPost({ text, ...(embed && { embed, processing }), ...(reply && { reply }) });
      if (!reply) state.addPrompt(postId);
      sendJson(res, 201, { postId });
    },
    "GET /api/feed": async (req, res) => {
      const threads = await feedFor(feedSvc.as(viewerName(req)), state.prompts());
      sendJson(res, 200, { threads: threads.map(({ post, replies }) => ({ post: captioned(post), replies: replies.map(captioned) })) });
    },
    "GET /api/posts/:id": async (req, res, id) => sendJson(res, 200, { post: captioned(await viewer(req).getPost(id)) }),
    // Signed-in pages only: the stream names the tenant's posts and their stages.
    "GET /api/events": async (req, res) => (viewer(req), live.subscribe(req, res)),
    "POST /webhooks": (req, res) => live.receive(req, res),
  };

  const pathId = (raw: string) => {
    try {
      return decodeURIComponent(raw);
    } catch {
      throw new HttpError(404, "NOT_FOUND", "no such post");
    }
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://app");
    const id = /^\/api\/posts\/([^/]+)/.exec(url.pathname)?.[1] ?? "";
    const key = `${req.method} ${url.pathname.replace(/^\/api\/posts\/[^/]+/, "/api/posts/:id")}`;
    const route = routes[key];
    const asset = req.method === "GET" ? staticFiles[url.pathname] : undefined;
    // Inside the promise: a path that does not decode (`%E0`) is the page's 404, never an exception nobody catches.
    const handled = route
      ? Promise.resolve().then(() => route(req, res, pathId(id)))
      : asset
        ? readFile(asset.file).then((body) => {
            res.writeHead(200, { "content-type": asset.type, "cache-control": "no-cache" });
            res.end(body);
          })
        : Promise.resolve(sendJson(res, 404, { error: { code: "NOT_FOUND", message: "no such page" } }));
    handled.catch((error: unknown) => sendError(res, error));
  });

  const { listen } = options;
  await new Promise<void>((resolve) => ("handle" in listen ? server.listen(listen.handle, resolve) : server.listen(listen.port, listen.host ?? "127.0.0.1", resolve)));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${"handle" in listen ? "127.0.0.1" : (listen.host ?? "127.0.0.1")}:${port}`,
    async close() {
      live.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
