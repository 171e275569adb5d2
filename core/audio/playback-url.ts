/** Signed playback capabilities: `?url=<blobs path>&exp=<unix s>&sig=<base64url HMAC-SHA256(key, "<path>.<exp>")>`. */
import { createHmac, timingSafeEqual } from "node:crypto";
import { type BlobAddress, parseBlobKey } from "../blobs/blob-key";
import { DomainError, validationError } from "../domain-error";

/** A playback URL in a post view stays valid at least this long (one hour)... */
export const playbackTtlSeconds = 3600;
/**
 * ...and its expiry is rounded up to a multiple of this step (15 minutes), so every read of the same blob within one
 * step signs the identical URL, which browsers and CDNs can cache: a URL lives between 60 and 75 minutes.
 */
export const playbackStepSeconds = 900;

/** How far ahead of this host's clock the host that signed a URL may run. */
const clockSkewSeconds = 60;

const sign = (secret: string, path: string, exp: number) => createHmac("sha256", secret).update(`${path}.${exp}`).digest("base64url");

export const unixSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

/** The `exp` of a URL signed at `now`: an hour ahead, rounded up to the next step. */
export const playbackExp = (now: Date) => Math.ceil((unixSeconds(now) + playbackTtlSeconds) / playbackStepSeconds) * playbackStepSeconds;

export interface SignPlaybackOptions {
  /** SVC_PUBLIC_BASE_URL, no trailing slash. */
  baseUrl: string;
  /** `blobs/<appId>/<cid>` */
  key: string;
  secret: string;
  now: Date;
  /** Another expiry than `playbackExp(now)` (tests of the far-future check). */
  exp?: number;
}

/** Where every playback URL of a deployment starts: its query follows. */
export const playbackUrlPrefix = (baseUrl: string): string => `${baseUrl.replace(/\/+$/, "")}/api/v1/audio?`;

export function signPlaybackUrl({ baseUrl, key, secret, now, exp = playbackExp(now) }: SignPlaybackOptions): string {
  if (!parseBlobKey(key)) throw new Error(`not a blob key: ${JSON.stringify(key)}`);
  // Key characters are all URL-safe, so the path reads as written in the contract (slashes unescaped).
  return `${playbackUrlPrefix(baseUrl)}url=${key}&exp=${exp}&sig=${sign(secret, key, exp)}`;
}

export interface VerifiedPlayback extends BlobAddress {
  exp: number;
}

const forbidden = (message: string) => new DomainError("FORBIDDEN", message);

/**
 * Checks a playback query in the contract's order: a missing `url` is 400; a path outside `blobs/`, with `..`,
 * or not `blobs/<appId>/<cid>` is 403; a missing, wrong or expired signature is 403. The query is already
 * percent-decoded, so `%2e%2e` arrives here as `..`.
 */
export function verifyPlayback(query: URLSearchParams, secret: string, now: Date): VerifiedPlayback {
  const path = query.get("url");
  if (path === null || path === "") throw validationError("url is required", [{ path: ["url"], message: "Required" }]);
  const address = parseBlobKey(path);
  if (!address) throw forbidden("url must be a blobs/<appId>/<cid> path");

  const expText = query.get("exp");
  const sig = query.get("sig");
  if (!expText || !sig) throw forbidden("missing playback signature");
  // One spelling per URL: decimal digits without leading zeros, so `exp=00<exp>` is not a second valid form.
  if (!/^(0|[1-9][0-9]{0,11})$/.test(expText)) throw forbidden("bad playback signature");
  const exp = Number(expText);

  // Compared as fixed-length strings in constant time; a canonical signature is always 43 base64url characters.
  const expected = Buffer.from(sign(secret, path, exp));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw forbidden("bad playback signature");
  if (unixSeconds(now) >= exp) throw forbidden("playback URL expired");
  // No URL outlives the longest lifetime one is issued with (a leaked signing key cannot mint one for years).
  if (exp - unixSeconds(now) > playbackTtlSeconds + playbackStepSeconds + clockSkewSeconds) throw forbidden("playback URL expires too far ahead");
  return { ...address, exp };
}
