import { createHash } from "node:crypto";
import { CID } from "multiformats/cid";
import * as Digest from "multiformats/hashes/digest";
import { describe, expect, it } from "vitest";
import { createRawCidHasher, isRawCid, rawCid } from "./raw-cid";

const independentCid = (bytes: Uint8Array) =>
  CID.create(1, 0x55, Digest.create(0x12, createHash("sha256").update(bytes).digest())).toString();

describe("raw CIDs", () => {
  it("a CID hashed chunk by chunk equals CIDv1(raw 0x55, sha2-256) computed from the whole bytes", () => {
    const bytes = Buffer.from("the quick brown fox jumps over the lazy dog".repeat(1000));
    const hasher = createRawCidHasher();
    for (let at = 0; at < bytes.length; at += 777) hasher.update(bytes.subarray(at, at + 777));
    const cid = hasher.cid();
    expect(cid).toBe(independentCid(bytes));
    expect(cid).toMatch(/^bafkrei[a-z2-7]{52}$/);
    expect(rawCid(bytes)).toBe(cid);
  });

  it("only the canonical base32 raw sha2-256 CIDv1 is well-formed", () => {
    const good = rawCid(Buffer.from("x"));
    expect(isRawCid(good)).toBe(true);
    const dagCbor = CID.create(1, 0x71, Digest.create(0x12, createHash("sha256").update("x").digest())).toString();
    const v0 = CID.createV0(Digest.create(0x12, createHash("sha256").update("x").digest())).toString();
    for (const bad of [good.toUpperCase(), dagCbor, v0, good.slice(0, -1), `${good}a`, "", "..", "bafkrei%2e"]) {
      expect(isRawCid(bad), bad).toBe(false);
    }
  });
});
