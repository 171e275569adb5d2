/**
 * A provider's `Retry-After` on a 429 or 503 (RFC 9110 §10.2.3): delay-seconds or an HTTP-date, as milliseconds
 * from `now`. Anything else, or a time already past, is no hint. The queue waits at least this long before the
 * stage's next attempt (retry-policy.ts), so a throttled provider is not asked again while it still refuses.
 */
export const retryAfterMs = (header: string | null | undefined, now = Date.now()): number | undefined => {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // Only the IMF-fixdate form Date.parse reads reliably; a bare number in another shape is not a date.
  const at = /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value) ? Date.parse(value) : NaN;
  return Number.isFinite(at) && at > now ? at - now : undefined;
};
