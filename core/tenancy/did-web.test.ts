import { describe, expect, it } from "vitest";
import { didWebDocumentUrl, isDidWeb } from "./did-web";

describe("didWebDocumentUrl", () => {
  it("a bare domain resolves to /.well-known/did.json over https", () => {
    expect(didWebDocumentUrl("did:web:example.com")).toBe("https://example.com/.well-known/did.json");
  });

  it("path segments become the document's path", () => {
    expect(didWebDocumentUrl("did:web:example.com:u:alice")).toBe("https://example.com/u/alice/did.json");
  });

  it("a percent-encoded port is decoded", () => {
    expect(didWebDocumentUrl("did:web:example.com%3A8443")).toBe("https://example.com:8443/.well-known/did.json");
  });

  it("loopback hosts on any port use http", () => {
    expect(didWebDocumentUrl("did:web:localhost%3A3000")).toBe("http://localhost:3000/.well-known/did.json");
    expect(didWebDocumentUrl("did:web:localhost")).toBe("http://localhost/.well-known/did.json");
    expect(didWebDocumentUrl("did:web:127.0.0.1%3A4000:t:a")).toBe("http://127.0.0.1:4000/t/a/did.json");
    expect(didWebDocumentUrl("did:web:%5B%3A%3A1%5D%3A3000")).toBe("http://[::1]:3000/.well-known/did.json");
    expect(didWebDocumentUrl("did:web:localhost.example.com")).toMatch(/^https:/);
  });

  it("rejects what is not a did:web DID naming a plain host", () => {
    for (const did of [
      "did:plc:abcdefghijklmnop",
      "did:web:",
      "did:web:exa mple.com",
      "did:web:example.com%2Fevil",
      "did:web:user%40example.com",
      "did:web:example.com%3Anotaport",
      "did:web:example.com::x",
      "did:web:example.com:..:x",
    ]) {
      expect(isDidWeb(did), did).toBe(false);
      expect(() => didWebDocumentUrl(did)).toThrow();
    }
  });
});
