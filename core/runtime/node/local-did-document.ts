import type { Config } from "../../config/types";
import type { HttpResponse } from "../../http-message/http-message";
import { didWebDocumentUrl } from "../../tenancy/did-web";

/**
 * For local development only: the Node host answers `/.well-known/did.json` for a tenant whose did:web names this
 * host, so a deployment with no public domain can still prove custody of its DID. Never in production, where a
 * service vouching for itself would prove nothing.
 */
export const localDidDocument = (config: Config, method: string, path: string, host: string | undefined): HttpResponse | undefined => {
  if (config.production || path !== "/.well-known/did.json" || (method !== "GET" && method !== "HEAD") || !host) return undefined;
  const tenant = [...config.tenants.values()].find((t) => t.did !== undefined && documentIsHere(t.did, host));
  if (!tenant) return undefined;
  const document = {
    "@context": ["https://www.w3.org/ns/did/v1"],
    // The configured DID exactly (however its host is cased or encoded): custody checks that `id` equals it.
    id: tenant.did,
    service: [{ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: `http://${config.pdsHost}` }],
  };
  return { status: 200, headers: { "Content-Type": "application/did+json" }, body: JSON.stringify(document) };
};

/**
 * Whether `did`'s document is this host's `/.well-known/did.json`. Hosts are compared as URLs compare them, so
 * `localhost%3a3313`, `LOCALHOST%3A3313` and a Host header `localhost:3313` are one host (and an IDN its punycode).
 */
function documentIsHere(did: string, host: string): boolean {
  // Only a host with an optional port, as in the DID: no credentials or path for URL parsing to drop.
  if (/[/?#@\\\s]/.test(host)) return false;
  try {
    const url = new URL(didWebDocumentUrl(did));
    return url.pathname === "/.well-known/did.json" && new URL(`${url.protocol}//${host}`).host === url.host;
  } catch {
    return false;
  }
}
