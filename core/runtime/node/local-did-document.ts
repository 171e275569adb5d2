import type { Config } from "../../config/types";
import type { HttpResponse } from "../../http-message/http-message";

/**
 * For local development only: the Node host answers `/.well-known/did.json` for a tenant whose did:web names this
 * host, so a deployment with no public domain can still prove custody of its DID. Never in production, where a
 * service vouching for itself would prove nothing.
 */
export const localDidDocument = (config: Config, method: string, path: string, host: string | undefined): HttpResponse | undefined => {
  if (config.production || path !== "/.well-known/did.json" || (method !== "GET" && method !== "HEAD") || !host) return undefined;
  const did = `did:web:${encodeURIComponent(host.toLowerCase())}`;
  const tenant = [...config.tenants.values()].find((t) => t.did === did);
  if (!tenant) return undefined;
  const document = {
    "@context": ["https://www.w3.org/ns/did/v1"],
    id: did,
    service: [{ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: `http://${config.pdsHost}` }],
  };
  return { status: 200, headers: { "Content-Type": "application/did+json" }, body: JSON.stringify(document) };
};
