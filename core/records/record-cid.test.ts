import { createHash } from "node:crypto";
import * as dagCbor from "@ipld/dag-cbor";
import { CID } from "multiformats/cid";
import { create as createDigest } from "multiformats/hashes/digest";
import { describe, expect, it } from "vitest";
import { recordCid } from "./record-cid";

const blobCid = "bafkreibme22gw2h7y2h7tg2fhqotaqjucnbc24deqo72b6mkl2egezxhvy";
const record = {
  $type: "dev.svc.audio.post",
  text: "hello",
  createdAt: "2026-01-01T00:00:00.000Z",
  embed: {
    $type: "dev.svc.embed.audio",
    audio: { $type: "blob", ref: { $link: blobCid }, mimeType: "audio/mpeg", size: 1234 },
  },
  langs: ["en"],
};

/** The same computation written out by hand: `$link` to CID.parse, dag-cbor, sha-256 from node:crypto. */
function independentCid(value: typeof record): string {
  const ipld = { ...value, embed: { ...value.embed, audio: { ...value.embed.audio, ref: CID.parse(value.embed.audio.ref.$link) } } };
  const bytes = dagCbor.encode(ipld);
  return CID.createV1(0x71, createDigest(0x12, createHash("sha256").update(bytes).digest())).toString();
}

describe("recordCid", () => {
  it("recordCid equals an independent dag-cbor, sha2-256 CIDv1 computation", () => {
    const cid = recordCid(record);
    expect(cid).toBe(independentCid(record));
    const parsed = CID.parse(cid);
    expect(parsed.version).toBe(1);
    expect(parsed.code).toBe(0x71);
    expect(parsed.multihash.code).toBe(0x12);
    expect(cid.startsWith("b")).toBe(true);
  });

  it("recordCid differs when any field changes", () => {
    const base = recordCid(record);
    const variants = [
      { ...record, text: "hello!" },
      { ...record, createdAt: "2026-01-01T00:00:00.001Z" },
      { ...record, langs: ["fr"] },
      { ...record, embed: { ...record.embed, audio: { ...record.embed.audio, size: 1235 } } },
      { ...record, embed: { ...record.embed, audio: { ...record.embed.audio, mimeType: "audio/ogg" } } },
      {
        ...record,
        embed: { ...record.embed, audio: { ...record.embed.audio, ref: { $link: "bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy" } } },
      },
    ];
    const cids = variants.map((variant) => recordCid(variant));
    expect(new Set([base, ...cids]).size).toBe(variants.length + 1);
  });

  it("recordCid is independent of JSON key order", () => {
    const reordered = {
      langs: ["en"],
      embed: { audio: { size: 1234, mimeType: "audio/mpeg", ref: { $link: blobCid }, $type: "blob" }, $type: "dev.svc.embed.audio" },
      createdAt: "2026-01-01T00:00:00.000Z",
      text: "hello",
      $type: "dev.svc.audio.post",
    };
    expect(recordCid(reordered)).toBe(recordCid(record));
  });

  it("a $link inside the record is encoded as a CID link, not a map", () => {
    const cidOf = (value: unknown) =>
      CID.createV1(0x71, createDigest(0x12, createHash("sha256").update(dagCbor.encode(value)).digest())).toString();
    expect(recordCid({ ref: { $link: blobCid } })).toBe(cidOf({ ref: CID.parse(blobCid) }));
    expect(recordCid({ ref: { $link: blobCid } })).not.toBe(cidOf({ ref: { $link: blobCid } }));
  });

  it("$bytes inside the record is encoded as bytes", () => {
    const bytes = new Uint8Array([104, 101, 108, 108, 111]);
    const expected = CID.createV1(
      0x71,
      createDigest(0x12, createHash("sha256").update(dagCbor.encode({ sig: bytes })).digest()),
    ).toString();
    expect(recordCid({ sig: { $bytes: "aGVsbG8" } })).toBe(expected);
  });

  // Vectors from AT Protocol's data-model fixtures (bluesky-social/atproto, packages/lex/lex-cbor/tests).
  const fixtures = [
    {
      json: {
        string: "abc",
        unicode: "a~öñ©⽘☎𓋓😀👨‍👩‍👧‍👧",
        integer: 123,
        bool: true,
        null: null,
        array: ["abc", "def", "ghi"],
        object: { string: "abc", number: 123, bool: true, arr: ["abc", "def", "ghi"] },
      },
      cid: "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq",
    },
    {
      json: {
        a: { $link: "bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a" },
        b: { $bytes: "nFERjvLLiw9qm45JrqH9QTzyC2Lu1Xb4ne6+sBrCzI0" },
        c: {
          $type: "blob",
          ref: { $link: "bafkreiccldh766hwcnuxnf2wh6jgzepf2nlu2lvcllt63eww5p6chi4ity" },
          mimeType: "image/jpeg",
          size: 10000,
        },
      },
      cid: "bafyreihldkhcwijkde7gx4rpkkuw7pl6lbyu5gieunyc7ihactn5bkd2nm",
    },
    {
      json: {
        a: {
          b: [
            {
              d: [
                { $link: "bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a" },
                { $link: "bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a" },
              ],
              e: [
                { $bytes: "nFERjvLLiw9qm45JrqH9QTzyC2Lu1Xb4ne6+sBrCzI0" },
                { $bytes: "iE+sPoHobU9tSIqGI+309LLCcWQIRmEXwxcoDt19tas" },
              ],
            },
          ],
        },
      },
      cid: "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i",
    },
  ];

  it.each(fixtures)("recordCid matches AT Protocol's data-model fixture $cid", ({ json, cid }) => {
    expect(recordCid(json)).toBe(cid);
  });
});
