import { describe, expect, it } from "vitest";
import type { Config } from "../../config/types";
import { checkCustodyDocument } from "../../tenancy/custody-document";
import { localDidDocument } from "./local-did-document";

const pdsHost = "localhost:3313";
const configWith = (did: string, production = false) =>
  ({ production, pdsHost, tenants: new Map([["local", { appId: "local", did }]]) }) as unknown as Config;
const served = (did: string, host: string, production = false) => {
  const res = localDidDocument(configWith(did, production), "GET", "/.well-known/did.json", host);
  return res && (JSON.parse(res.body as string) as { id: string });
};

describe("the Node host's local did.json", () => {
  it("a tenant DID with lowercase percent-encoding or uppercase host letters is served, its id the configured DID exactly", () => {
    for (const did of ["did:web:localhost%3A3313", "did:web:localhost%3a3313", "did:web:LocalHost%3A3313"]) {
      const doc = served(did, "localhost:3313");
      expect(doc?.id, did).toBe(did);
      // The document proves custody of exactly the DID custody checks.
      expect(checkCustodyDocument(did, doc, pdsHost), did).toEqual({ ok: true });
    }
    expect(served("did:web:localhost%3A3313", "LOCALHOST:3313")?.id).toBe("did:web:localhost%3A3313");
  });

  it("serves only the tenant whose DID names this host, port included, and never in production", () => {
    expect(served("did:web:localhost%3A3313", "localhost:3314")).toBeUndefined();
    expect(served("did:web:localhost", "localhost:3313")).toBeUndefined();
    expect(served("did:web:localhost%3A3313:u:alice", "localhost:3313")).toBeUndefined();
    expect(served("did:web:localhost%3A3313", "evil@localhost:3313")).toBeUndefined();
    expect(served("did:web:localhost%3A3313", "localhost:3313", true)).toBeUndefined();
  });
});
