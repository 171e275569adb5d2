import { gatewayAnswered, retryDelayMs, type RetryOptions } from "./retry-policy.js";
import { SvcError, SvcNetworkError, type ErrorCode } from "./svc-error.js";

/** What every client made by `createClient` shares, `.as()` views included. */
export interface Transport {
  baseUrl: string;
  token: string;
  fetch: typeof fetch;
  /** Per attempt, answer body included. */
  timeoutMs: number;
  retry: RetryOptions;
  /** Waits `ms`; ends early, rejecting, when `signal` aborts, and leaves no timer behind. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Whether the deployment offers direct-to-storage uploads (learnt from its first answer). */
  directUploads: boolean | undefined;
}

export interface Actor {
  actor?: string;
  did?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface Call {
  method: "GET" | "POST" | "PATCH";
  path: string;
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  /** A body built afresh for each attempt (a stream can be read once). */
  body?: () => { body: BodyInit; headers: Record<string, string> };
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/**
 * Headers carry bytes: the actor id goes out as its UTF-8 bytes, as the service reads it. One with a control
 * character (a line break, NUL) can go in no header: it is refused here, at once and never retried, as the service
 * refuses one (400 VALIDATION_ERROR), rather than failing inside fetch as if the network had.
 */
const headerValue = (name: string, value: string): string => {
  if (/[\u0000-\u001f\u007f]/u.test(value)) {
    const issues = [{ path: ["headers", name], message: "must not contain control characters" }];
    throw new SvcError({ status: 400, code: "VALIDATION_ERROR", message: `${name} must not contain control characters`, requestId: null, issues });
  }
  return String.fromCharCode(...new TextEncoder().encode(value));
};

/**
 * The service's rule for a key (1 to 255 printable ASCII characters), checked before sending: a key no header can
 * carry would otherwise fail inside fetch, look like a network error, and be retried though nothing was sent.
 */
const keyRefusal = (key: string): SvcError | undefined => {
  if (/^[\x20-\x7e]{1,255}$/.test(key)) return undefined;
  const message = "Idempotency-Key must be 1 to 255 printable ASCII characters";
  return new SvcError({ status: 400, code: "VALIDATION_ERROR", message, requestId: null, issues: [{ path: ["headers", "Idempotency-Key"], message }] });
};

export const urlOf = (baseUrl: string, path: string, query: Call["query"] = {}): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const search = params.toString();
  return `${baseUrl.replace(/\/+$/, "")}${path}${search ? `?${search}` : ""}`;
};

/** Attempts until one succeeds, a failure is not retryable, or the retries are spent. */
export const withRetries = async <T>(transport: Transport, signal: AbortSignal | undefined, once: () => Promise<T>): Promise<T> => {
  let unanswered = false;
  for (let retry = 0; ; retry++) {
    signal?.throwIfAborted();
    try {
      return await once();
    } catch (failure) {
      unanswered ||= failure instanceof SvcNetworkError || (failure instanceof SvcError && gatewayAnswered(failure));
      const delay = retryDelayMs(failure, retry, transport.retry, unanswered);
      if (delay === null) throw failure;
      await pause(transport, delay, signal);
    }
  }
};

/** The transport's sleep, cut short by the caller's abort (also when an injected sleep ignores the signal). */
const pause = async (transport: Transport, ms: number, signal: AbortSignal | undefined): Promise<void> => {
  if (!signal) return transport.sleep(ms);
  signal.throwIfAborted();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([transport.sleep(ms, signal), aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
};

/**
 * One call to the service. A POST or PATCH carries an Idempotency-Key, the caller's or one made for this call, on
 * every attempt: it is retried only under it. The service honours the key on create and PATCH; the upload routes,
 * keyed by content, and a direct upload's completion, which answers its retries the same blob, are safe to repeat
 * without it.
 */
export const send = <T>(transport: Transport, who: Actor, call: Call): Promise<T> => {
  // Trimmed of HTTP whitespace as fetch trims a header value, then held to the service's rule.
  const key = call.idempotencyKey?.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  const refused = key === undefined ? undefined : keyRefusal(key);
  if (refused) return Promise.reject(refused);
  const keyed = call.method === "GET" ? call : { ...call, idempotencyKey: key ?? crypto.randomUUID() };
  return withRetries(transport, keyed.signal, () => attempt<T>(transport, who, keyed));
};

const attempt = async <T>(transport: Transport, who: Actor, call: Call): Promise<T> => {
  const headers: Record<string, string> = { accept: "application/json", authorization: `Bearer ${transport.token}` };
  if (who.actor !== undefined) headers["x-svc-acting-actor"] = headerValue("X-Svc-Acting-Actor", who.actor);
  if (who.did !== undefined) headers["x-svc-acting-actor-did"] = headerValue("X-Svc-Acting-Actor-Did", who.did);
  if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
  let body: BodyInit | undefined;
  if (call.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(call.json);
  } else if (call.body) {
    const built = call.body();
    Object.assign(headers, built.headers);
    body = built.body;
  }
  const { response, text } = await exchange(transport, urlOf(transport.baseUrl, call.path, call.query), { method: call.method, headers, body }, call.signal);
  return answerOf<T>(response, text, call.idempotencyKey);
};

/**
 * One request and its answer within the transport's timeout (the whole body, unless `read` is false: then the
 * headers, and the body is the caller's to stream); a failure without an answer becomes an SvcNetworkError, except
 * the caller's own abort, which stays what it is.
 */
export const exchange = async (
  transport: Transport,
  url: string,
  init: RequestInit,
  callerSignal?: AbortSignal,
  read = true,
): Promise<{ response: Response; text: string }> => {
  const clock = new AbortController();
  const timer = setTimeout(() => clock.abort(), transport.timeoutMs);
  const signal = callerSignal ? AbortSignal.any([callerSignal, clock.signal]) : clock.signal;
  const request: RequestInit & { duplex?: "half" } = { redirect: "manual", ...init, signal };
  if (init.body instanceof ReadableStream) request.duplex = "half";
  try {
    const response = await transport.fetch(url, request);
    return { response, text: read ? await response.text() : "" };
  } catch (error) {
    if (callerSignal?.aborted) throw callerSignal.reason;
    const timedOut = clock.signal.aborted;
    const message = timedOut ? `no answer within ${transport.timeoutMs} ms` : `request failed: ${error instanceof Error ? error.message : String(error)}`;
    const idempotencyKey = new Headers(init.headers).get("idempotency-key") ?? undefined;
    throw new SvcNetworkError(`${init.method ?? "GET"} ${new URL(url).pathname}: ${message}`, { timedOut, cause: error, idempotencyKey });
  } finally {
    clearTimeout(timer);
  }
};

/** How much of an error answer's text an SvcError keeps: a gateway's page can be large. */
const bodyChars = 4096;

/**
 * The envelope's `data`, or its error as an SvcError. An answer not in the envelope (a gateway's, a WAF's, a CDN's)
 * keeps what it has: a top-level `message` (API Gateway's `{"message": ...}`), its text, and API Gateway's
 * `apigw-requestid` when no X-Request-ID came.
 */
export const answerOf = <T>(response: Response, text: string, idempotencyKey?: string): T => {
  let envelope: { success?: boolean; data?: unknown; error?: { code?: ErrorCode; message?: string; issues?: [] }; requestId?: unknown; message?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(text);
    // JSON that is no object (`null`, a number) is no envelope either: described by its status below.
    if (parsed && typeof parsed === "object") envelope = parsed as typeof envelope;
  } catch {
    // Not JSON: described by its status below.
  }
  if (response.ok && envelope.success === true) return envelope.data as T;
  const error = envelope.error && typeof envelope.error === "object" ? envelope.error : undefined;
  const message = error ? error.message : typeof envelope.message === "string" ? envelope.message : undefined;
  const requestId = typeof envelope.requestId === "string" ? envelope.requestId : undefined;
  throw new SvcError({
    status: response.status,
    code: error?.code ?? codeOfStatus(response.status),
    message: message || `HTTP ${response.status} ${response.statusText}`.trim(),
    requestId: requestId ?? response.headers.get("x-request-id") ?? response.headers.get("apigw-requestid"),
    issues: error?.issues,
    retryAfter: retryAfterSeconds(response.headers.get("retry-after")),
    idempotencyKey,
    body: text.slice(0, bodyChars),
  });
};

const codeOfStatus = (status: number): ErrorCode =>
  (({ 400: "VALIDATION_ERROR", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND", 413: "PAYLOAD_TOO_LARGE", 429: "RATE_LIMITED" }) as Record<number, ErrorCode>)[
    status
  ] ?? (status >= 502 && status <= 504 ? "SERVICE_UNAVAILABLE" : "INTERNAL");

/** Retry-After as seconds (a fraction, which RFC 9110 does not allow, rounded up rather than read as a date) or an HTTP date. */
const retryAfterSeconds = (value: string | null): number | undefined => {
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value.trim()));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
};
