import { answerOf, exchange, withRetries, type Transport } from "./transport.js";

export interface GetAudioOptions {
  /** A single byte range (`bytes=1000-`): the file store answers 206. */
  range?: string;
  signal?: AbortSignal;
}

/**
 * The audio behind a signed playback URL (a view's `embed.url`). The URL is the capability, so no token is sent;
 * a storage redirect (S3 answers 302 to a presigned GET) is followed. Answers the Response with its body unread, to
 * stream; an error answer (a bad or expired signature is 403) is an SvcError.
 */
export const getAudio = (transport: Transport, url: string, method: "GET" | "HEAD", options: GetAudioOptions = {}): Promise<Response> =>
  withRetries(transport, options.signal, async () => {
    const headers: Record<string, string> = options.range ? { range: options.range } : {};
    const { response } = await exchange(transport, url, { method, headers, redirect: "follow" }, options.signal, false);
    return response.ok ? response : answerOf<never>(response, await response.text());
  });
