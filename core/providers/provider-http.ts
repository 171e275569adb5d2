/**
 * One outbound call to an external provider: bounded by the call's deadline, redirects never followed, and the
 * failure rule of the provider port applied (429, 408, 5xx, timeouts and network errors `retry`; any other 4xx, a
 * redirect `fail`). Messages name the provider and the status, never a request header (where the API key is).
 */
import { type ProviderCall, ProviderError } from "./provider-port";

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
  } catch {
    // The cause is dropped on purpose: some fetch errors echo the request, headers included.
    const timedOut = timeout.aborted;
    throw new ProviderError("retry", `${provider}: ${timedOut ? "timed out" : "network error"}`, timedOut ? "timeout" : "provider_error");
  }
  if (response.ok) return response;
  await response.body?.cancel().catch(() => undefined);
  if (response.status >= 300 && response.status < 400) throw new ProviderError("fail", `${provider}: unexpected redirect (HTTP ${response.status}), not followed`);
  const retry = response.status === 408 || response.status === 429 || response.status >= 500;
  throw new ProviderError(retry ? "retry" : "fail", `${provider}: HTTP ${response.status}`);
}

/** Reads a body within the call's deadline; a body cut short is a network error (`retry`). */
export async function readBody(provider: string, response: Response): Promise<Buffer> {
  try {
    return Buffer.from(await response.arrayBuffer());
  } catch {
    throw new ProviderError("retry", `${provider}: the answer was cut short`);
  }
}

/**
 * Reads a JSON answer within the call's deadline: a body cut short is a network error (`retry`, as `readBody`),
 * while bytes that are not JSON read as undefined, for the caller to call a malformed answer (`fail`).
 */
export async function readJson(provider: string, response: Response): Promise<unknown> {
  const bytes = await readBody(provider, response);
  try {
    return JSON.parse(bytes.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}
