import { SvcError, SvcNetworkError } from "./svc-error.js";

export interface RetryOptions {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** The first backoff; each retry doubles it, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 whose Retry-After is longer than this is not waited for: the call fails with it at once. */
  maxRetryAfterSeconds: number;
}

export const retryDefaults: RetryOptions = { maxRetries: 2, baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterSeconds: 60 };

/** Exponential backoff with equal jitter: between half and all of `base * 2^retry` (capped), never in lockstep. */
export const backoffMs = (retry: number, options: RetryOptions, random = Math.random): number => {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
};

/**
 * How long to wait before retrying after `failure`, or null when it must not be retried. Every call the client makes
 * is harmless to run twice (a GET, a keyed POST or PATCH, a content-addressed upload, a direct upload's completion),
 * so failures that may have reached the handler are retried too; a 429 after its Retry-After. `unanswered` says an
 * earlier attempt of this call got no answer from the service (a network error, a timeout, or a gateway's 502 or 504
 * while the service may run on): a 409 IDEMPOTENCY_IN_PROGRESS then is that attempt still running under the call's
 * key, and waiting for it is how the lost answer is retried. On a first attempt the 409 is another call holding the
 * caller's key, and is the caller's to see.
 */
export const retryDelayMs = (failure: unknown, retry: number, options: RetryOptions, unanswered = false): number | null => {
  if (retry >= options.maxRetries) return null;
  if (failure instanceof SvcError) {
    if (unanswered && failure.status === 409 && failure.code === "IDEMPOTENCY_IN_PROGRESS") return backoffMs(retry, options);
    if (failure.status === 429) {
      if (failure.retryAfter === undefined) return backoffMs(retry, options);
      return failure.retryAfter <= options.maxRetryAfterSeconds ? failure.retryAfter * 1000 : null;
    }
    return [408, 502, 503, 504].includes(failure.status) ? backoffMs(retry, options) : null;
  }
  return failure instanceof SvcNetworkError ? backoffMs(retry, options) : null;
};

/** An answer a gateway gives in the service's place (502, 504): the request may still be running behind it. */
export const gatewayAnswered = (failure: SvcError): boolean => failure.status === 502 || failure.status === 504;
