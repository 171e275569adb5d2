/**
 * Calls the rendition service (docs/decisions.md#rendition-service) with its bearer token, and maps its answers onto the provider
 * port's failure rule: 429, 5xx, timeouts and network errors are `retry`; any other 4xx, a redirect (never followed)
 * or a malformed answer is `fail`.
 */
import type { AcceptedMimeType } from "../../records/accepted-types";
import { ProviderError } from "../provider-port";
import { ranOutOfTime, readJson, refusal } from "../provider-http";

export type RenditionOperation = "trim" | "denoise" | "normalize" | "render" | "waveform";

export interface RenditionSourceRef {
  appId: string;
  cid: string;
  mimeType: AcceptedMimeType;
}

export interface RenditionClientOptions {
  /** SVC_RENDITION_SERVICE_URL, no trailing slash. */
  baseUrl: string;
  /** RENDITION_SERVICE_TOKEN, else SYSTEM_AUTH_TOKEN. */
  token: string;
  fetch?: typeof fetch;
}

export interface RenditionCallOptions {
  signal?: AbortSignal;
  /** Epoch milliseconds by which the call must have returned. */
  deadline: number;
  /** `/v1/trim`: measure the output's loudness too, for the normalize that follows. */
  measureOutput?: boolean;
}

export interface RenditionClient {
  call(operation: RenditionOperation, source: RenditionSourceRef, options: RenditionCallOptions): Promise<unknown>;
}

export function createRenditionClient({ baseUrl, token, fetch: fetchImpl = fetch }: RenditionClientOptions): RenditionClient {
  return {
    async call(operation, source, { signal, deadline, measureOutput }) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new ProviderError("retry", `rendition ${operation}: no time left before the deadline`, "timeout");
      const timeout = AbortSignal.timeout(remaining);
      let response: Response;
      try {
        response = await fetchImpl(`${baseUrl}/v1/${operation}`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ appId: source.appId, cid: source.cid, mimeType: source.mimeType, ...(measureOutput && { measureOutput }) }),
          redirect: "manual",
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        const timedOut = timeout.aborted || ranOutOfTime(error, { deadline, signal });
        throw new ProviderError("retry", `rendition ${operation}: ${timedOut ? "timed out" : "network error"}`, timedOut ? "timeout" : "provider_error", {
          cause: error,
        });
      }
      let body: { success?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
      // An answer cut short (a network error or a timeout, retry) or too large (fail) fails so whatever a 2xx status
      // said; one that is not JSON reads as none. An error answer is read with the same bound.
      let cutShort: unknown;
      try {
        body = (await readJson(`rendition ${operation}`, response, { deadline, signal })) as typeof body;
      } catch (error) {
        cutShort = error;
      }
      if (response.status >= 300 && response.status < 400) throw new ProviderError("fail", `rendition ${operation}: unexpected redirect ${response.status}`);
      if (!response.ok) {
        // Only a code of the envelope's shape: the message is logged, and a proxy's error page or echo could
        // carry anything, the Authorization header included.
        const code = body?.error?.code;
        const detail = typeof code === "string" && /^[A-Z_]{1,40}$/.test(code) ? ` ${code}` : "";
        throw refusal(response, `rendition ${operation}: HTTP ${response.status}${detail}`);
      }
      if (cutShort) throw cutShort;
      if (!body || body.success !== true || body.data === undefined) throw new ProviderError("fail", `rendition ${operation}: malformed answer`);
      return body.data;
    },
  };
}
