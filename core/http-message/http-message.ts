import type { Readable } from "node:stream";

/** A runtime-neutral HTTP request: the Node host and the Lambda adapter both produce one. */
export interface HttpRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Header names lower-cased. */
  headers: Readonly<Record<string, string | undefined>>;
  query: URLSearchParams;
  /** Path template parameters (`{postId}`), filled by the router (the Node host, or API Gateway). */
  params: Readonly<Record<string, string>>;
  /** The address the edge saw (socket address, or API Gateway's requestContext.http.sourceIp). */
  sourceIp: string;
  /** The body as a stream; read it once. Lambda bodies arrive whole, the Node host streams. */
  body(): Readable;
  /** Whether the client went away before the answer (the Node host knows; a Lambda's client never does). */
  clientClosed?(): boolean;
  /** Whether the body arrived slower than the host's floor and was cut off (the Node host; answered 408). */
  bodyTooSlow?(): boolean;
}

export type HttpBody = string | Uint8Array | Readable;

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body?: HttpBody;
}
