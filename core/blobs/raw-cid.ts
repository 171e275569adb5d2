/** Content addresses of uploaded bytes: CIDv1, raw codec (0x55), sha2-256, base32 string. */
import { createHash } from "node:crypto";
import { CID } from "multiformats/cid";
import * as Digest from "multiformats/hashes/digest";

const rawCodec = 0x55;
const sha256Code = 0x12;

export interface RawCidHasher {
  update(chunk: Uint8Array): void;
  /** The CID of everything passed to `update`; call once. */
  cid(): string;
}

/** Hashes bytes as they stream by, so a CID never needs the whole file in memory. */
export function createRawCidHasher(): RawCidHasher {
  const hash = createHash("sha256");
  return {
    update: (chunk) => void hash.update(chunk),
    cid: () => rawCidOfDigest(hash.digest()),
  };
}

/** The CID of bytes whose SHA-256 was computed elsewhere (the upload hash worker). */
export function rawCidOfDigest(sha256: Uint8Array): string {
  return CID.createV1(rawCodec, Digest.create(sha256Code, sha256)).toString();
}

export function rawCid(bytes: Uint8Array): string {
  const hasher = createRawCidHasher();
  hasher.update(bytes);
  return hasher.cid();
}

/** True only for the canonical string form of a raw sha2-256 CIDv1, the only kind this service mints. */
export function isRawCid(value: string): boolean {
  if (!/^b[a-z2-7]{58}$/.test(value)) return false;
  try {
    const cid = CID.parse(value);
    return (
      cid.version === 1 &&
      cid.code === rawCodec &&
      cid.multihash.code === sha256Code &&
      cid.multihash.size === 32 &&
      cid.toString() === value
    );
  } catch {
    return false;
  }
}
