import { createHash } from "node:crypto";
import * as dagCbor from "@ipld/dag-cbor";
import { jsonToLex, lexToIpld } from "@atproto/lexicon";
import { CID } from "multiformats/cid";
import { create as createDigest } from "multiformats/hashes/digest";

const sha256Code = 0x12;

/**
 * CIDv1 (dag-cbor, sha2-256, base32) of a lex-json record, computed on its IPLD form
 * (`{ $link }` becomes a CID link, `{ $bytes }` becomes bytes) the way a PDS computes it.
 */
export function recordCid(record: object): string {
  const bytes = dagCbor.encode(lexToIpld(jsonToLex(record)));
  const digest = createDigest(sha256Code, createHash("sha256").update(bytes).digest());
  return CID.createV1(dagCbor.code, digest).toString();
}
