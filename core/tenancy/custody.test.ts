import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../domain-error";
import { createCustody, maxDocumentBytes } from "./custody";

const pdsHost = "pds.example.test";
type Route = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let port: number;
const routes = new Map<string, Route>();
const hits = new Map<string, number>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route) route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  routes.clear();
  hits.clear();
});

/** A tenant DID on the local server: did:web:127.0.0.1%3A<port>:t:<name> -> /t/<name>/did.json */
const didFor = (name: string) => `did:web:127.0.0.1%3A${port}:t:${name}`;
const pathFor = (name: string) => `/t/${name}/did.json`;
const pdsService = (endpoint = `https://${pdsHost}`) => ({ id: "#atproto_pds", type: "AtprotoPersonalDataServer", serviceEndpoint: endpoint });
const json = (body: unknown, status = 200): Route => (_req, res) => {
  res.writeHead(status, { "content-type": "application/did+json" }).end(JSON.stringify(body));
};
function serveDoc(name: string, services: object[], id = didFor(name)) {
  routes.set(pathFor(name), json({ "@context": ["https://www.w3.org/ns/did/v1"], id, service: services }));
}

function setup(opts: { now?: () => number; pds?: string; timeoutMs?: number } = {}) {
  const errors: { msg: string; extra?: object }[] = [];
  const warnings: { msg: string; extra?: object }[] = [];
  const custody = createCustody({
    pdsHost: opts.pds ?? pdsHost,
    now: opts.now,
    timeoutMs: opts.timeoutMs,
    log: { error: (msg, extra) => void errors.push({ msg, extra }), warn: (msg, extra) => void warnings.push({ msg, extra }), info() {} },
  });
  return { custody, errors, warnings, prove: (name: string) => custody.prove({ appId: name, did: didFor(name) }) };
}

async function expectUnavailable(promise: Promise<void>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).code).toBe("TENANT_UNAVAILABLE");
}

function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}
const minute = 60_000;
const hour = 60 * minute;

describe("custody proof", () => {
  it("accepts #atproto_pds of type AtprotoPersonalDataServer whose endpoint is SVC_PDS_HOST", async () => {
    serveDoc("pds", [pdsService()]);
    await expect(setup().prove("pds")).resolves.toBeUndefined();
  });

  it("accepts a bare did:web served at /.well-known/did.json and sends the did+json Accept header", async () => {
    const did = `did:web:127.0.0.1%3A${port}`;
    let accept: string | undefined;
    routes.set("/.well-known/did.json", (req, res) => {
      accept = req.headers.accept;
      json({ id: did, service: [{ ...pdsService(), id: `${did}#atproto_pds` }] })(req, res);
    });
    await setup().custody.prove({ appId: "root", did });
    expect(accept).toContain("application/did+json");
  });

  it("accepts #atproto_space_host of any type, by fragment or fully qualified id", async () => {
    serveDoc("space", [{ id: "#atproto_space_host", type: "SomethingElse", serviceEndpoint: `https://${pdsHost}/` }]);
    serveDoc("spacefq", [{ id: `${didFor("spacefq")}#atproto_space_host`, serviceEndpoint: `https://${pdsHost}` }]);
    const { prove, errors } = setup();
    await expect(prove("space")).resolves.toBeUndefined();
    await expect(prove("spacefq")).resolves.toBeUndefined();
    expect(errors).toEqual([]);
  });

  it("#atproto_space_host, when present, decides even if #atproto_pds would match", async () => {
    serveDoc("both", [{ id: "#atproto_space_host", type: "X", serviceEndpoint: "https://elsewhere.test" }, pdsService()]);
    await expectUnavailable(setup().prove("both"));
  });

  it("rejects #atproto_pds of the wrong type", async () => {
    serveDoc("type", [{ ...pdsService(), type: "SomethingElse" }]);
    const { prove, errors } = setup();
    await expectUnavailable(prove("type"));
    expect(errors[0]!.extra).toMatchObject({ appId: "type", reason: expect.stringContaining("AtprotoPersonalDataServer") });
  });

  it("rejects an endpoint on another host", async () => {
    serveDoc("host", [pdsService("https://pds.other.test")]);
    serveDoc("suffix", [pdsService(`https://${pdsHost}.evil.test`)]);
    serveDoc("port", [pdsService(`https://${pdsHost}:8443`)]);
    const { prove } = setup({ pds: `${pdsHost}:443` });
    await expectUnavailable(prove("host"));
    await expectUnavailable(prove("suffix"));
    await expectUnavailable(prove("port"));
    serveDoc("default", [pdsService(`https://${pdsHost}/`)]);
    await prove("default");
  });

  it("compares the endpoint's host with SVC_PDS_HOST, port included: a host without one means the scheme's default", async () => {
    serveDoc("withport", [pdsService(`http://localhost:3000/`)]);
    serveDoc("otherport", [pdsService(`https://${pdsHost}:8443`)]);
    await setup({ pds: "localhost:3000" }).prove("withport");
    await expectUnavailable(setup().prove("otherport"));
    await expectUnavailable(setup({ pds: "localhost:3001" }).prove("withport"));
  });

  it("rejects a document whose id is not the DID", async () => {
    serveDoc("id", [pdsService()], "did:web:someone-else.test");
    await expectUnavailable(setup().prove("id"));
  });

  it("a tenant without a DID is unavailable", async () => {
    await expectUnavailable(setup().custody.prove({ appId: "nodid" }));
  });

  it("a redirect is a failure and is never followed", async () => {
    serveDoc("target", [pdsService()]);
    routes.set(pathFor("redir"), (_req, res) => res.writeHead(302, { location: pathFor("target") }).end());
    await expectUnavailable(setup().prove("redir"));
    expect(hits.get(pathFor("redir"))).toBe(1);
    expect(hits.get(pathFor("target"))).toBeUndefined();
  });

  it("a document over the size cap is rejected", async () => {
    const did = didFor("big");
    routes.set(pathFor("big"), json({ id: did, service: [pdsService()], padding: "x".repeat(maxDocumentBytes) }));
    await expectUnavailable(setup().prove("big"));
  });

  it("one tenant failing does not affect another", async () => {
    serveDoc("good", [pdsService()]);
    serveDoc("broken", [pdsService("https://elsewhere.test")]);
    const { prove, errors } = setup();
    await expectUnavailable(prove("broken"));
    await prove("good");
    await expectUnavailable(prove("broken"));
    await prove("good");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.extra).toMatchObject({ appId: "broken" });
  });

  it("a proof is cached for an hour, then the document is fetched again", async () => {
    serveDoc("cache", [pdsService()]);
    const c = clock();
    const { prove } = setup({ now: c.now });
    await prove("cache");
    c.advance(59 * minute);
    await prove("cache");
    expect(hits.get(pathFor("cache"))).toBe(1);
    c.advance(2 * minute);
    await prove("cache");
    expect(hits.get(pathFor("cache"))).toBe(2);
  });

  it("when the document is unreachable the last good proof holds for up to 24 hours, and not after", async () => {
    serveDoc("outage", [pdsService()]);
    const c = clock();
    const { prove, errors, warnings } = setup({ now: c.now });
    await prove("outage");
    routes.set(pathFor("outage"), json({ error: "down" }, 503));
    c.advance(2 * hour);
    await prove("outage");
    c.advance(21 * hour);
    await prove("outage");
    expect(errors).toEqual([]);
    expect(warnings).toHaveLength(2);
    c.advance(hour + 1);
    await expectUnavailable(prove("outage"));
    expect(hits.get(pathFor("outage"))).toBe(4);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.extra).toMatchObject({ appId: "outage", reason: expect.stringContaining("503") });
  });

  it("through an outage a shared proof store that fails is treated as absent: the proof this process holds stays", async () => {
    serveDoc("storedown", [pdsService()]);
    const c = clock();
    let storeUp = true;
    const store = async () => {
      if (!storeUp) throw new Error("database unreachable");
    };
    const warnings: string[] = [];
    const custody = createCustody({
      pdsHost,
      now: c.now,
      proofs: { load: async () => (await store(), undefined), save: store, revoke: store },
      log: { error() {}, warn: (msg) => void warnings.push(msg), info() {} },
    });
    const prove = () => custody.prove({ appId: "storedown", did: didFor("storedown") });
    await prove();
    storeUp = false;
    routes.set(pathFor("storedown"), json({ error: "down" }, 503));
    c.advance(2 * hour);
    await expect(prove()).resolves.toBeUndefined();
    expect(warnings).toContain("custody proof store: load failed");
  });

  it("a timeout counts as unreachable, so the last good proof holds", async () => {
    serveDoc("slow", [pdsService()]);
    const c = clock();
    // A timeout the first fetch (answered at once) meets even on a loaded machine; the second is never answered.
    const { prove, errors, warnings } = setup({ now: c.now, timeoutMs: 1_000 });
    await prove("slow");
    routes.set(pathFor("slow"), () => {}); // never answers
    c.advance(2 * hour);
    await expect(prove("slow")).resolves.toBeUndefined();
    expect(hits.get(pathFor("slow"))).toBe(2);
    expect(errors).toEqual([]);
    expect(warnings).toEqual([{ msg: expect.stringContaining("unreachable"), extra: expect.objectContaining({ appId: "slow", reason: expect.stringMatching(/timeout|abort/i) }) }]);
  });

  it("a reachable document that fails the check revokes the proof at once", async () => {
    serveDoc("revoke", [pdsService()]);
    const c = clock();
    const { prove } = setup({ now: c.now });
    await prove("revoke");
    serveDoc("revoke", [pdsService("https://moved.test")]);
    c.advance(hour + 1);
    await expectUnavailable(prove("revoke"));
  });

  it("a failed proof is remembered for 30 seconds, so a broken tenant costs one fetch, not one per request", async () => {
    const c = clock();
    const { prove, errors } = setup({ now: c.now });
    await expectUnavailable(prove("missing"));
    c.advance(29_000);
    await expectUnavailable(prove("missing"));
    expect(hits.get(pathFor("missing"))).toBe(1);
    expect(errors).toHaveLength(1);
    serveDoc("missing", [pdsService()]);
    c.advance(2_000);
    await prove("missing");
    expect(hits.get(pathFor("missing"))).toBe(2);
  });

  it("concurrent first calls for one tenant share one fetch", async () => {
    const did = didFor("flight");
    let answer!: () => void;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    // The document is answered only once every call has been made.
    routes.set(pathFor("flight"), (req, res) => void asked.then(() => json({ id: did, service: [pdsService()] })(req, res)));
    const { prove } = setup();
    const calls = Array.from({ length: 10 }, () => prove("flight"));
    answer();
    await Promise.all(calls);
    expect(hits.get(pathFor("flight"))).toBe(1);
  });
});
