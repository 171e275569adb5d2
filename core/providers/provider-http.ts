/**
 * One outbound call to an external provider: bounded by the call's deadline, redirects never followed, and the
 * failure rule of the provider port applied (429, 408, 5xx, timeouts and network errors `retry`, with the provider's
 * `Retry-After` when it sent one; any other 4xx, a redirect `fail`). Messages name the provider and the status, never
 * a request header (where the API key is).
 */
import { type ProviderCall, ProviderError } from "./provider-port";
import { retryAfterMs } from "./retry-after";

/**
 * The most bytes of an answer read into memory: a transcript of hours of speech is a few tens of MB of JSON. An
 * answer past it is refused (`fail`) as soon as it is, so a provider or proxy gone wrong cannot exhaust the worker.
 */
export const maxAnswerBytes = 64 * 1024 * 1024;

/** The call's deadline and signal: enough to tell a call that ran out of time from one that broke. */
export type CallTime = Pick<ProviderCall, "deadline"> & { signal?: AbortSignal };

/**
 * A failed call ran out of time when the deadline has passed or it was aborted on a timeout: the pass's own signal
 * (run-pass.ts) ends at the same deadline and, made earlier, fires before the call's timer, so neither timer alone
 * says which. An abort for another reason (a lost lease) is not a timeout.
 */
export const ranOutOfTime = (error: unknown, { deadline, signal }: CallTime): boolean =>
  Date.now() >= deadline || isTimeout(error) || (signal?.aborted === true && isTimeout(signal.reason));

const isTimeout = (value: unknown) => (value as { name?: unknown } | null | undefined)?.name === "TimeoutError";

export async function providerFetch(
  provider: string,
  url: string,
  init: RequestInit,
  call: ProviderCall,
  fetchImpl: typeof fetch = fetch,
): Promise<Response> {
  const remaining = call.deadline - Date.now();
  if (remaining <= 0) throw new ProviderError("retry", `${provider}: no time left before the deadline`, "timeout");
  const timeout = AbortSignal.timeout(remaining);
  let response: Response;
  try {
    response = await fetchImpl(url, { ...init, redirect: "manual", signal: AbortSignal.any([call.signal, timeout]) });
  } catch (error) {
    // The cause is dropped on purpose: some fetch errors echo the request, headers included.
    const timedOut = timeout.aborted || ranOutOfTime(error, call);
    throw new ProviderError("retry", `${provider}: ${timedOut ? "timed out" : "network error"}`, timedOut ? "timeout" : "provider_error");
  }
  if (response.ok) return response;
  await response.body?.cancel().catch(() => undefined);
  if (response.status >= 300 && response.status < 400) throw new ProviderError("fail", `${provider}: unexpected redirect (HTTP ${response.status}), not followed`);
  throw refusal(response, `${provider}: HTTP ${response.status}`);
}

/**
 * A provider's error answer (not 2xx, not a redirect) as the port's failure: 408, 429 and 5xx `retry`, with the
 * provider's `Retry-After` when it sent one; any other status `fail`.
 */
export const refusal = (response: Response, message: string): ProviderError => {
  const retry = response.status === 408 || response.status === 429 || response.status >= 500;
  return new ProviderError(retry ? "retry" : "fail", message, "provider_error", {
    retryAfterMs: retry ? retryAfterMs(response.headers.get("retry-after")) : undefined,
  });
};

/**
 * Reads a body within the call's deadline, counting its bytes: past `maxBytes` the rest is cancelled unread and the
 * answer refused (`fail`). A body still arriving at the deadline is a timeout, one cut short otherwise a network
 * error (both `retry`).
 */
export async function readBody(provider: string, response: Response, call: CallTime, maxBytes = maxAnswerBytes): Promise<Buffer> {
  const tooLarge = () => new ProviderError("fail", `${provider}: answer larger than ${maxBytes} bytes`);
  const body = response.body;
  if (!body) return Buffer.alloc(0);
  if (Number(response.headers.get("content-length")) > maxBytes) {
    await body.cancel().catch(() => undefined);
    throw tooLarge();
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch (error) {
      const timedOut = ranOutOfTime(error, call);
      throw new ProviderError("retry", `${provider}: ${timedOut ? "timed out reading the answer" : "the answer was cut short"}`, timedOut ? "timeout" : "provider_error");
    }
    if (next.done) return Buffer.concat(chunks, total);
    total += next.value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(next.value);
  }
}

/**
 * Reads a JSON answer as `readBody` does (cut short: `retry`; too large: `fail`), while bytes that are not JSON read
 * as undefined, for the caller to call a malformed answer (`fail`).
 */
export async function readJson(provider: string, response: Response, call: CallTime): Promise<unknown> {
  const bytes = await readBody(provider, response, call);
  try {
    return JSON.parse(bytes.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}
