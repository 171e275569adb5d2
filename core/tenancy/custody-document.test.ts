import { describe, expect, it } from "vitest";
import { checkCustodyDocument } from "./custody-document";

const did = "did:web:tenant.example";
const pds = (serviceEndpoint: string, extra: object = {}) => ({ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint, ...extra });
const check = (doc: unknown, pdsHost = "pds.example.test") => checkCustodyDocument(did, doc, pdsHost);

describe("the custody check of a did:web document, without fetching it", () => {
  it("holds for #atproto_pds of type AtprotoPersonalDataServer on SVC_PDS_HOST, matched case-insensitively", () => {
    expect(check({ id: did, service: [pds("https://pds.example.test")] })).toEqual({ ok: true });
    expect(check({ id: did, service: [pds("https://pds.example.test")] }, "PDS.Example.Test")).toEqual({ ok: true });
  });

  it("names what is wrong: not an object, another id, no custody entry, the wrong type, another host", () => {
    const reasonOf = (doc: unknown, host?: string) => (check(doc, host) as { reason: string }).reason;
    expect(reasonOf([])).toBe("document is not a JSON object");
    expect(reasonOf({ id: "did:web:other.example", service: [pds("https://pds.example.test")] })).toBe("document id does not equal the DID");
    expect(reasonOf({ id: did, service: [] })).toBe("no #atproto_space_host or #atproto_pds service");
    expect(reasonOf({ id: did, service: [pds("https://pds.example.test", { type: "Other" })] })).toContain("AtprotoPersonalDataServer");
    expect(reasonOf({ id: did, service: [pds("https://pds.example.test:8443")] }, "pds.example.test:443")).toContain("does not point at");
  });

  it("a custody endpoint on another port of SVC_PDS_HOST is refused when SVC_PDS_HOST names no port", () => {
    expect(check({ id: did, service: [pds("https://pds.example.test:8443")] })).toMatchObject({ ok: false });
    expect(check({ id: did, service: [pds("http://pds.example.test:8080")] })).toMatchObject({ ok: false });
    // The scheme's own port is the one a host without a port means.
    expect(check({ id: did, service: [pds("https://pds.example.test:443/")] })).toEqual({ ok: true });
    expect(check({ id: did, service: [pds("http://pds.example.test:80")] })).toEqual({ ok: true });
  });

  it("#atproto_space_host decides when present, whatever its type", () => {
    const space = { id: `${did}#atproto_space_host`, type: "Anything", serviceEndpoint: "https://elsewhere.test" };
    expect(check({ id: did, service: [space, pds("https://pds.example.test")] })).toMatchObject({ ok: false });
    expect(check({ id: did, service: [{ ...space, serviceEndpoint: "https://pds.example.test/" }] })).toEqual({ ok: true });
  });
});
