import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection without a status line (what a crashed or reset handler looks like). */
  empty: boolean;
}

/**
 * Sends bytes exactly as given (fetch would normalise a malformed target or refuse bad framing) and reads one
 * response, until the server closes the connection or `timeoutMs` passes.
 */
export const rawRequest = (port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      const parsed = parse(Buffer.concat(chunks));
      if (parsed && parsed.complete) socket.destroy();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      const parsed = parse(Buffer.concat(chunks));
      resolve(parsed ?? { status: 0, headers: {}, body: "", empty: true });
    });
    socket.on("connect", () => {
      socket.write(request, (error) => error && reject(error));
    });
  });

const parse = (bytes: Buffer): (RawResponse & { complete: boolean }) | undefined => {
  const end = bytes.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = bytes.subarray(end + 4);
  const length = Number(headers["content-length"] ?? NaN);
  return { status, headers, body: body.toString("utf8"), empty: false, complete: Number.isFinite(length) && body.length >= length };
};
