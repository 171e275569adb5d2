import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * did:web documents for test tenants, on loopback: `did:web:127.0.0.1%3A<port>:<name>` resolves to
 * `http://127.0.0.1:<port>/<name>/did.json`. Documents can be changed between requests.
 */
export const startDidServer = async () => {
  const documents = new Map<string, unknown>();
  const server = createServer((req, res) => {
    const name = req.url?.match(/^\/([\w-]+)\/did\.json$/)?.[1];
    const doc = name ? documents.get(name) : undefined;
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "application/did+json" }).end(JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const didOf = (name: string) => `did:web:127.0.0.1%3A${port}:${name}`;
  return {
    didOf,
    /** Publishes a custody-proving document for `name` whose endpoint names `pdsHost`. */
    publish(name: string, pdsHost: string, overrides: Record<string, unknown> = {}) {
      documents.set(name, {
        id: didOf(name),
        service: [{ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: `https://${pdsHost}` }],
        ...overrides,
      });
    },
    unpublish(name: string) {
      documents.delete(name);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
