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
 * How long to wait before retrying after `failure`, or null when it must not be retried. `repeatable` says whether
 * running the request twice is harmless (GET, a keyed POST or PATCH, a content-addressed upload): only then are
 * failures that may have reached the handler retried. A 429 never did (the limiter refuses before it), so it is
 * retried on every request, after its Retry-After.
 */
export const retryDelayMs = (failure: unknown, retry: number, repeatable: boolean, options: RetryOptions): number | null => {
  if (retry >= options.maxRetries) return null;
  if (failure instanceof SvcError) {
    if (failure.status === 429) {
      if (failure.retryAfter === undefined) return backoffMs(retry, options);
      return failure.retryAfter <= options.maxRetryAfterSeconds ? failure.retryAfter * 1000 : null;
    }
    return repeatable && [408, 502, 503, 504].includes(failure.status) ? backoffMs(retry, options) : null;
  }
  return repeatable && failure instanceof SvcNetworkError ? backoffMs(retry, options) : null;
};
