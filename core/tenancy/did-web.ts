/** did:web DIDs and where their documents live (https://w3c-ccg.github.io/did-method-web/). */
import { isValidDid } from "@atproto/syntax";

const loopbackHostnames = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function isLoopbackHostname(hostname: string): boolean {
  return loopbackHostnames.has(hostname.toLowerCase());
}

/**
 * `did:web:example.com` -> `https://example.com/.well-known/did.json`; `did:web:example.com:u:alice` ->
 * `https://example.com/u/alice/did.json`; the host is percent-decoded (`localhost%3A3000`). Loopback hosts use
 * http so local deployments can prove custody. Throws on anything that is not a did:web DID naming a plain host.
 */
export function didWebDocumentUrl(did: string): string {
  if (!isValidDid(did) || !did.startsWith("did:web:")) throw new Error("not a did:web DID");
  const [encodedHost = "", ...segments] = did.slice("did:web:".length).split(":");
  let host: string;
  try {
    host = decodeURIComponent(encodedHost).toLowerCase();
  } catch {
    throw new Error("did:web host is not percent-encoded correctly");
  }
  // Only a hostname with an optional port may come out of decoding: no path, credentials or query smuggled in.
  if (host === "" || /[/?#@\\\s]/.test(host)) throw new Error("did:web host is not a host");
  let parsed: URL;
  try {
    parsed = new URL(`https://${host}`);
  } catch {
    throw new Error("did:web host is not a host");
  }
  const scheme = isLoopbackHostname(parsed.hostname) ? "http" : "https";
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    throw new Error("did:web path has an empty or dot segment");
  }
  const path = segments.length === 0 ? "/.well-known/did.json" : `/${segments.join("/")}/did.json`;
  return `${scheme}://${host}${path}`;
}

export function isDidWeb(did: string): boolean {
  try {
    didWebDocumentUrl(did);
    return true;
  } catch {
    return false;
  }
}
