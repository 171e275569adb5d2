/**
 * Where the rendition service is and how to call it: `SVC_RENDITION_SERVICE_URL` (absolute http(s)), which needs
 * `SYSTEM_AUTH_TOKEN`; calls carry `RENDITION_SERVICE_TOKEN`, else `SYSTEM_AUTH_TOKEN`. Without either the rendition
 * service counts as not configured (trim and waveform have no provider, mp3 misses are 404).
 */
import type { Logger } from "../observability/logger";

export interface RenditionTarget {
  /** Base URL, no trailing slash. */
  url: string;
  token: string;
}

const minTokenLength = 32;

export function parseRenditionTarget(
  read: (name: "SVC_RENDITION_SERVICE_URL" | "RENDITION_SERVICE_TOKEN") => string | undefined,
  systemAuthToken: string | undefined,
  fail: (variable: string, message: string) => undefined,
  log: Pick<Logger, "error">,
): RenditionTarget | undefined {
  const raw = read("SVC_RENDITION_SERVICE_URL");
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail("SVC_RENDITION_SERVICE_URL", "SVC_RENDITION_SERVICE_URL must be an absolute http(s) URL");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username || url.password || url.search || url.hash) {
    return fail("SVC_RENDITION_SERVICE_URL", "SVC_RENDITION_SERVICE_URL must be an absolute http(s) URL with no credentials, query or fragment");
  }
  if (systemAuthToken === undefined) {
    log.error("SVC_RENDITION_SERVICE_URL is set but SYSTEM_AUTH_TOKEN is not: the rendition service is not used", {
      variable: "SVC_RENDITION_SERVICE_URL",
    });
    return undefined;
  }
  const token = renditionServiceToken(read("RENDITION_SERVICE_TOKEN"), systemAuthToken, log);
  return { url: `${url.origin}${url.pathname}`.replace(/\/+$/, ""), token };
}

/**
 * The bearer token between the service and the rendition service: RENDITION_SERVICE_TOKEN when it is long enough,
 * else SYSTEM_AUTH_TOKEN. Both sides choose it here (rendition-config.ts), so the token sent is the token accepted.
 */
export function renditionServiceToken<S extends string | undefined>(own: string | undefined, systemAuthToken: S, log: Pick<Logger, "error">): string | S {
  if (own !== undefined && own.length >= minTokenLength) return own;
  if (own !== undefined) {
    log.error(`RENDITION_SERVICE_TOKEN is shorter than ${minTokenLength} characters and is ignored; SYSTEM_AUTH_TOKEN is sent instead`, {
      variable: "RENDITION_SERVICE_TOKEN",
    });
  }
  return systemAuthToken;
}
