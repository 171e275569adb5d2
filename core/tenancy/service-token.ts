import { createHash, timingSafeEqual } from "node:crypto";
import type { Tenant } from "./tenant";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Finds the tenant a bearer token belongs to. Every configured token is compared, in constant time over
 * equal-length digests, so neither the match position nor the token length leaks through timing.
 */
export const createTokenIndex = (tenants: Iterable<Tenant>) => {
  const entries = [...tenants].filter((t) => t.token).map((t) => ({ tenant: t, digest: digest(t.token!) }));
  return (presented: string): Tenant | undefined => {
    const candidate = digest(presented);
    let found: Tenant | undefined;
    for (const entry of entries) if (timingSafeEqual(candidate, entry.digest) && !found) found = entry.tenant;
    return found;
  };
};

/** Constant-time comparison of a presented secret with the configured one. */
export const secretMatches = (presented: string, expected: string): boolean =>
  timingSafeEqual(digest(presented), digest(expected));

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export const bearerToken = (header: string | undefined): string | undefined => {
  const match = header?.match(/^Bearer[ ]+(\S+)\s*$/i);
  return match?.[1];
};
