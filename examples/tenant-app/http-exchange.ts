import type { IncomingMessage, ServerResponse } from "node:http";
import { SvcError, SvcNetworkError } from "../../client/src/index";

/** A request body of at most `limit` bytes, whole. */
export const readBody = async (req: IncomingMessage, limit: number): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, "TOO_LARGE", "body too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
};

/** A JSON object body: the routes read its fields, so `null`, an array or a number is refused as the page's mistake. */
export const readJson = async <T extends object>(req: IncomingMessage): Promise<Partial<T>> => {
  let body: unknown;
  try {
    body = JSON.parse((await readBody(req, 64 * 1024)).toString("utf8"));
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, "BAD_REQUEST", "the body is not JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, "BAD_REQUEST", "the body must be a JSON object");
  return body as Partial<T>;
};

/** The app's own refusals (the service's are SvcErrors). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
};

/** The page sees the service's error code and message, never more (no token, no stack). */
export const sendError = (res: ServerResponse, error: unknown) => {
  if (res.headersSent) return void res.destroy();
  if (error instanceof SvcError) {
    const { retryAfter } = error;
    const wait = retryAfter === undefined ? {} : { retryAfter };
    return sendJson(res, error.status, { error: { code: error.code, message: error.message, ...wait } }, retryAfter === undefined ? {} : { "retry-after": String(retryAfter) });
  }
  if (error instanceof HttpError) return sendJson(res, error.status, { error: { code: error.code, message: error.message } });
  if (error instanceof SvcNetworkError) return sendJson(res, 502, { error: { code: "UPSTREAM", message: "the service could not be reached" } });
  // The app's own fault: its log says what, the page only that it failed (not that the service did).
  console.error("tenant app: request failed", error);
  sendJson(res, 500, { error: { code: "INTERNAL", message: "the app failed to answer" } });
};

/** A cookie's value; one that does not decode is no cookie (the page is signed out), not a failure. */
export const cookieOf = (req: IncomingMessage, name: string): string | undefined => {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key !== name) continue;
    try {
      return decodeURIComponent(value.join("="));
    } catch {
      return undefined;
    }
  }
  return undefined;
};
