import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DomainError } from "../domain-error";
import { backends, migratedDatabase, type TestDatabase } from "../../test/support/databases";
import { createCustody, proofFreshMs, proofGraceMs } from "./custody";
import { sqlCustodyProofs } from "./custody-proofs";

const pdsHost = "pds.example.test";
const did = "did:web:tenant.example.test";
const hour = 3_600_000;
const silent = { error() {}, warn() {}, info() {} };
const documentOf = (endpoint: string) => ({
  id: did,
  service: [{ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: endpoint }],
});

/** The tenant's did:web document as the network serves it right now: a document, or an outage. */
let serving: { doc: unknown } | "down";
let fetches = 0;
const fakeFetch = (async () => {
  fetches++;
  if (serving === "down") throw Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
  return new Response(JSON.stringify(serving.doc), { status: 200, headers: { "content-type": "application/did+json" } });
}) as typeof fetch;

describe.each(backends)("custody proofs shared through the database ($name)", (backend) => {
  let db: TestDatabase;
  let clock = Date.parse("2026-11-22T00:00:00Z");
  /** A fresh process (a Lambda cold start): nothing in memory, the database shared. */
  const coldStart = () => createCustody({ pdsHost, log: silent, fetch: fakeFetch, now: () => clock, proofs: sqlCustodyProofs(db) });
  const unavailable = expect.objectContaining({ code: "TENANT_UNAVAILABLE" }) as unknown as DomainError;

  beforeAll(async () => {
    db = await migratedDatabase(backend);
  });
  afterAll(() => db.close());

  it("a cold start trusts a proof another process made within the hour, without fetching the document", async () => {
    serving = { doc: documentOf(`https://${pdsHost}`) };
    await coldStart().prove({ appId: "a1", did });
    const before = fetches;
    clock += proofFreshMs / 2;
    await coldStart().prove({ appId: "a1", did });
    expect(fetches).toBe(before);
  });

  it("the 24-hour grace survives a cold start: an outage after the last good proof keeps the tenant served", async () => {
    serving = { doc: documentOf(`https://${pdsHost}`) };
    await coldStart().prove({ appId: "a2", did });
    serving = "down";
    clock += 20 * hour;
    await expect(coldStart().prove({ appId: "a2", did })).resolves.toBeUndefined();
    clock += proofGraceMs - 20 * hour;
    await expect(coldStart().prove({ appId: "a2", did })).rejects.toEqual(unavailable);
  });

  it("a revoked proof is revoked for every process: a reachable document that fails the check deletes it", async () => {
    serving = { doc: documentOf(`https://${pdsHost}`) };
    await coldStart().prove({ appId: "a3", did });
    clock += proofFreshMs + 1;
    serving = { doc: documentOf("https://elsewhere.example.test") };
    await expect(coldStart().prove({ appId: "a3", did })).rejects.toEqual(unavailable);
    serving = "down";
    await expect(coldStart().prove({ appId: "a3", did })).rejects.toEqual(unavailable);
  });

  it("a revoked proof is not kept by another running process through an outage", async () => {
    const [a, b] = [coldStart(), coldStart()];
    serving = { doc: documentOf(`https://${pdsHost}`) };
    await a.prove({ appId: "a5", did });
    await b.prove({ appId: "a5", did });
    clock += proofFreshMs + 1;
    serving = { doc: documentOf("https://elsewhere.example.test") };
    await expect(a.prove({ appId: "a5", did })).rejects.toEqual(unavailable);
    serving = "down";
    await expect(b.prove({ appId: "a5", did })).rejects.toEqual(unavailable);
  });

  it("through an outage a running process keeps its proof while the stored proof stands", async () => {
    const [a, b] = [coldStart(), coldStart()];
    serving = { doc: documentOf(`https://${pdsHost}`) };
    await a.prove({ appId: "a6", did });
    await b.prove({ appId: "a6", did });
    serving = "down";
    clock += proofGraceMs - hour;
    await expect(b.prove({ appId: "a6", did })).resolves.toBeUndefined();
    clock += hour;
    await expect(b.prove({ appId: "a6", did })).rejects.toEqual(unavailable);
  });

  it("a proof stored for another DID of the tenant does not hold for this one", async () => {
    serving = { doc: documentOf(`https://${pdsHost}`) };
    await coldStart().prove({ appId: "a4", did });
    serving = "down";
    await expect(coldStart().prove({ appId: "a4", did: "did:web:other.example.test" })).rejects.toEqual(unavailable);
  });
});
