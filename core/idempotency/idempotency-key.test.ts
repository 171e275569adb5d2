import { describe, expect, it } from "vitest";
import { DomainError } from "../domain-error";
import { fingerprint, parseIdempotencyKey } from "./idempotency-key";

const rejects = (header: string) => {
  try {
    parseIdempotencyKey(header);
  } catch (e) {
    return e instanceof DomainError && e.code === "VALIDATION_ERROR";
  }
  return false;
};

describe("Idempotency-Key header", () => {
  it("an absent header means no idempotency", () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it("accepts 1 to 255 printable ASCII characters", () => {
    expect(parseIdempotencyKey("a")).toBe("a");
    expect(parseIdempotencyKey("x".repeat(255))).toBe("x".repeat(255));
    expect(parseIdempotencyKey("order 42 / retry #1 ~")).toBe("order 42 / retry #1 ~");
    expect(parseIdempotencyKey("  padded  ")).toBe("padded");
  });

  it("rejects an empty, blank or over-long key with VALIDATION_ERROR", () => {
    expect(rejects("")).toBe(true);
    expect(rejects("   ")).toBe(true);
    expect(rejects("x".repeat(256))).toBe(true);
  });

  it("trims only HTTP's optional whitespace (space, tab): a key with Unicode whitespace around it is refused, not read as the key inside", () => {
    expect(parseIdempotencyKey("\t key \t")).toBe("key");
    for (const ws of ["\u00a0", "\ufeff", "\u2028", "\u3000", "\u000b", "\u000c", "\n"]) {
      expect(rejects(`key${ws}`), JSON.stringify(ws)).toBe(true);
      expect(rejects(`${ws}key`), JSON.stringify(ws)).toBe(true);
    }
  });

  it("rejects control characters and non-ASCII", () => {
    expect(rejects("a\tb")).toBe(true);
    expect(rejects("a\u007fb")).toBe(true);
    expect(rejects("clé")).toBe(true);
  });
});

describe("body fingerprint", () => {
  it("the same body in another key order or spacing has the same fingerprint", () => {
    const a = JSON.parse('{"text":"hi","langs":["en"],"reply":{"root":{"uri":"u","cid":"c"}}}');
    const b = JSON.parse('{ "reply": { "root": { "cid": "c", "uri": "u" } }, "langs": ["en"], "text": "hi" }');
    expect(fingerprint(a)).toBe(fingerprint(b));
    expect(fingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a different body has a different fingerprint", () => {
    expect(fingerprint({ text: "hi" })).not.toBe(fingerprint({ text: "hi!" }));
    expect(fingerprint({ langs: ["en", "de"] })).not.toBe(fingerprint({ langs: ["de", "en"] }));
  });
});
