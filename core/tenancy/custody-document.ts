/**
 * Whether a tenant's did:web document names this deployment as its custodian (docs/decisions.md#tenancy-and-custody):
 * the document's `id` is the DID, and its custody entry (`#atproto_space_host` of any type, else `#atproto_pds` of
 * type `AtprotoPersonalDataServer`) has a `serviceEndpoint` on SVC_PDS_HOST. Pure: the fetching is custody.ts's.
 */
export type DocumentCheck = { ok: true } | { ok: false; reason: string };

const invalid = (reason: string): DocumentCheck => ({ ok: false, reason });

/** `pdsHost` is SVC_PDS_HOST: a host, optionally `host:port`. */
export function checkCustodyDocument(did: string, doc: unknown, pdsHost: string): DocumentCheck {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return invalid("document is not a JSON object");
  const { id, service } = doc as { id?: unknown; service?: unknown };
  if (id !== did) return invalid("document id does not equal the DID");
  const services = Array.isArray(service) ? (service as unknown[]) : [];
  const find = (fragment: string) =>
    services.find((s): s is Record<string, unknown> => {
      if (typeof s !== "object" || s === null) return false;
      const sid = (s as { id?: unknown }).id;
      return sid === fragment || sid === `${did}${fragment}`;
    });
  // #atproto_space_host, when present, is the custody entry whatever its type; only then is #atproto_pds consulted.
  const spaceHost = find("#atproto_space_host");
  const pds = find("#atproto_pds");
  if (!spaceHost) {
    if (!pds) return invalid("no #atproto_space_host or #atproto_pds service");
    if (pds.type !== "AtprotoPersonalDataServer") return invalid("#atproto_pds is not of type AtprotoPersonalDataServer");
  }
  const [fragment, entry] = spaceHost ? ["#atproto_space_host", spaceHost] : ["#atproto_pds", pds!];
  const host = pdsHost.toLowerCase();
  return endpointOn(entry.serviceEndpoint, host) ? { ok: true } : invalid(`${fragment} serviceEndpoint does not point at ${host}`);
}

/** Whether `endpoint` is an http(s) URL whose host is `pdsHost`: a port neither names is the scheme's default. */
function endpointOn(endpoint: unknown, pdsHost: string): boolean {
  if (typeof endpoint !== "string") return false;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return false;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return false;
  // Parsing SVC_PDS_HOST under the endpoint's scheme drops its default port, as the endpoint's own host does, so
  // `host:443` equals an https endpoint with no port and `host` refuses one on port 8443.
  return url.host === new URL(`${url.protocol}//${pdsHost}`).host;
}
