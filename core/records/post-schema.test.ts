import { CID } from "multiformats/cid";
import { identity } from "multiformats/hashes/identity";
import { describe, expect, it } from "vitest";
import { acceptedMimeTypes as audioMimeTypes, maxUploadBytes as maxAudioBytes } from "./accepted-types";
import { assertValidRecord } from "./lexicons";
import { nsids } from "./nsids";
import { buildPostRecord, createPostBodySchema, postRecordSchema, type CreatePostBody } from "./post-schema";

const now = new Date("2026-01-01T00:00:00.000Z");
const cid = "bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm";
const blobCid = "bafkreibme22gw2h7y2h7tg2fhqotaqjucnbc24deqo72b6mkl2egezxhvy";
const uriPrefix = "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/dev.svc.audio.post/";
const strongRef = { uri: `${uriPrefix}3lbqcfqdbxk2a`, cid };

/** A CIDv1 of exactly `length` characters, made with an identity multihash of the right size. */
function cidOfLength(length: number): string {
  const digestBytes = Math.floor(((length - 1) * 5) / 8) - 4;
  const made = CID.createV1(0x71, identity.digest(new Uint8Array(digestBytes).fill(7))).toString();
  if (made.length !== length) throw new Error(`cannot make a ${length}-character CID`);
  return made;
}

const audio = (over: Record<string, unknown> = {}) => ({
  $type: nsids.embedAudio,
  audio: { $type: "blob", ref: { $link: blobCid }, mimeType: "audio/mpeg", size: 1234, ...over },
});

type Row = {
  name: string;
  body: Record<string, unknown>;
  valid: boolean;
  /** Set when only zod enforces the rule: the lexicon cannot express it, so it accepts the built record. */
  zodOnly?: string;
};

const rows: Row[] = [
  { name: "text only", body: { text: "hello" }, valid: true },
  { name: "empty text with an audio embed", body: { text: "", embed: audio() }, valid: true },
  ...audioMimeTypes.map((mimeType) => ({ name: `audio of type ${mimeType}`, body: { text: "", embed: audio({ mimeType }) }, valid: true })),
  {
    name: "every field at its limit",
    body: {
      text: "a".repeat(3000),
      embed: audio({ size: maxAudioBytes }),
      reply: { root: strongRef, parent: { uri: uriPrefix + "a".repeat(512 - uriPrefix.length), cid: cidOfLength(128) } },
      langs: ["en", "pt-BR", "en-x-aaaaaaaa-bbbbbbbb-cccccccc-ddd"],
      selfLabels: Array.from({ length: 10 }, () => "l".repeat(128)),
      processing: { denoise: true, trim: false, transcribe: true, waveform: true },
    },
    valid: true,
  },
  { name: "empty processing object", body: { text: "x", processing: {} }, valid: true },
  { name: "text of 3000 emoji (characters are grapheme clusters)", body: { text: "👍🏽".repeat(3000) }, valid: true },
  { name: "text of 3000 accented letters", body: { text: "é".repeat(3000) }, valid: true },

  { name: "text over 3000 characters", body: { text: "a".repeat(3001) }, valid: false },
  { name: "text over 3000 emoji", body: { text: "👍".repeat(3001) }, valid: false },
  { name: "text over 30000 UTF-8 bytes in 3000 characters", body: { text: "e\u0301\u0301\u0301\u0301\u0301".repeat(3000) }, valid: false },
  { name: "missing text", body: { embed: audio() }, valid: false },
  { name: "text not a string", body: { text: 5 }, valid: false },
  { name: "four langs", body: { text: "x", langs: ["en", "fr", "de", "es"] }, valid: false },
  { name: "a lang over 35 characters", body: { text: "x", langs: ["en-x-aaaaaaaa-bbbbbbbb-cccccccc-dddd"] }, valid: false },
  { name: "a lang that is not a language tag", body: { text: "x", langs: ["english!"] }, valid: false },
  { name: "eleven selfLabels", body: { text: "x", selfLabels: Array.from({ length: 11 }, () => "l") }, valid: false },
  { name: "a selfLabel over 128 characters", body: { text: "x", selfLabels: ["l".repeat(129)] }, valid: false },
  { name: "a selfLabel that is not a string", body: { text: "x", selfLabels: [1] }, valid: false },
  { name: "reply uri over 512 characters", body: { text: "x", reply: { root: strongRef, parent: { uri: uriPrefix + "a".repeat(513 - uriPrefix.length), cid } } }, valid: false },
  { name: "reply uri not an at:// URI", body: { text: "x", reply: { root: strongRef, parent: { uri: "https://example.com/p/1", cid } } }, valid: false },
  { name: "reply cid over 128 characters", body: { text: "x", reply: { root: strongRef, parent: { uri: strongRef.uri, cid: cidOfLength(129) } } }, valid: false },
  { name: "reply cid not a CID", body: { text: "x", reply: { root: strongRef, parent: { uri: strongRef.uri, cid: "not-a-cid" } } }, valid: false },
  { name: "reply without parent", body: { text: "x", reply: { root: strongRef } }, valid: false },
  { name: "audio of type audio/flac", body: { text: "", embed: audio({ mimeType: "audio/flac" }) }, valid: false },
  { name: "audio type with a codec parameter", body: { text: "", embed: audio({ mimeType: "audio/webm;codecs=opus" }) }, valid: false },
  { name: "audio over 25 MiB", body: { text: "", embed: audio({ size: maxAudioBytes + 1 }) }, valid: false },
  { name: "blob $link not a CID", body: { text: "", embed: audio({ ref: { $link: "nope" } }) }, valid: false },
  { name: "blob ref with an unknown field", body: { text: "", embed: audio({ extra: 1 }) }, valid: false },
  { name: "processing stage not a boolean", body: { text: "x", processing: { denoise: "yes" } }, valid: false },

  { name: "unknown top-level field", body: { text: "x", originAppId: "app" }, valid: false, zodOnly: "strict body (buildPostRecord drops unknown keys)" },
  { name: "client-sent createdAt", body: { text: "x", createdAt: "2020-01-01T00:00:00.000Z" }, valid: false, zodOnly: "strict body (the server stamps createdAt)" },
  { name: "unknown field in reply.root", body: { text: "x", reply: { root: { ...strongRef, extra: 1 }, parent: strongRef } }, valid: false, zodOnly: "lexicon objects are open" },
  { name: "unknown field in reply", body: { text: "x", reply: { root: strongRef, parent: strongRef, extra: 1 } }, valid: false, zodOnly: "lexicon objects are open" },
  { name: "unknown field in embed", body: { text: "", embed: { ...audio(), extra: 1 } }, valid: false, zodOnly: "lexicon objects are open" },
  { name: "unknown processing stage", body: { text: "x", processing: { upscale: true } }, valid: false, zodOnly: "lexicon objects are open" },
  { name: "an embed of another type", body: { text: "x", embed: { $type: "dev.svc.embed.other" } }, valid: false, zodOnly: "the embed union is open" },
  { name: "empty text and no audio", body: { text: "" }, valid: false, zodOnly: "text-or-audio rule" },
  { name: "blank text and no audio", body: { text: "  \n\t" }, valid: false, zodOnly: "text-or-audio rule" },
  { name: "audio of size 0", body: { text: "", embed: audio({ size: 0 }) }, valid: false, zodOnly: "blob sizes are at least 1 byte" },
  { name: "audio of fractional size", body: { text: "", embed: audio({ size: 1.5 }) }, valid: false, zodOnly: "blob sizes are integers" },
];

function lexiconVerdict(body: Record<string, unknown>): boolean {
  try {
    assertValidRecord(nsids.post, buildPostRecord(body as CreatePostBody, now));
    return true;
  } catch {
    return false;
  }
}

describe("create body schema", () => {
  it.each(rows)("the zod schemas agree with the lexicons: $name", ({ body, valid, zodOnly }) => {
    expect(createPostBodySchema.safeParse(body).success).toBe(valid);
    expect(lexiconVerdict(body)).toBe(zodOnly ? true : valid);
  });

  it("a post with neither text nor audio is rejected at path text", () => {
    const result = createPostBodySchema.safeParse({ text: " " });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path)).toEqual([["text"]]);
  });

  it("unknown fields are rejected at every level", () => {
    const result = createPostBodySchema.safeParse({
      text: "x",
      extra: 1,
      reply: { root: { ...strongRef, extra: 1 }, parent: strongRef },
      processing: { extra: true },
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining([[], ["reply", "root"], ["processing"]]),
    );
  });
});

describe("stored record", () => {
  const body = createPostBodySchema.parse({
    processing: { transcribe: true },
    selfLabels: ["quiet"],
    langs: ["en"],
    reply: { root: strongRef, parent: strongRef },
    embed: audio(),
    text: "hello",
  });

  it("the stored record is exactly $type, text, createdAt and the optional fields present, in that order", () => {
    const record = buildPostRecord(body, now);
    expect(Object.keys(record)).toEqual(["$type", "text", "createdAt", "embed", "reply", "langs", "selfLabels", "processing"]);
    expect(record).toEqual({ ...body, $type: nsids.post, createdAt: "2026-01-01T00:00:00.000Z" });
    expect(Object.keys(buildPostRecord({ text: "hi" }, now))).toEqual(["$type", "text", "createdAt"]);
  });

  it("the stored record has no undefined keys", () => {
    const record = buildPostRecord({ text: "hi", embed: undefined, langs: undefined }, now);
    expect(Object.values(record)).not.toContain(undefined);
    expect(JSON.parse(JSON.stringify(record))).toEqual(record);
  });

  it("the stored record validates against the lexicon and the record schema", () => {
    const record = buildPostRecord(body, now);
    expect(() => assertValidRecord(nsids.post, record)).not.toThrow();
    expect(postRecordSchema.parse(record)).toEqual(record);
  });

  it("createdAt is ISO 8601 UTC with milliseconds", () => {
    const record = buildPostRecord({ text: "hi" }, new Date(Date.UTC(2026, 4, 6, 7, 8, 9, 10)));
    expect(record.createdAt).toBe("2026-05-06T07:08:09.010Z");
    for (const createdAt of ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000+00:00", "2026-02-30T00:00:00.000Z", "2026-01-01"]) {
      expect(postRecordSchema.safeParse({ ...record, createdAt }).success).toBe(false);
    }
  });

  it("the record schema rejects a record of another type or with unknown fields", () => {
    const record = buildPostRecord({ text: "hi" }, now);
    expect(postRecordSchema.safeParse({ ...record, $type: nsids.transcript }).success).toBe(false);
    expect(postRecordSchema.safeParse({ ...record, originAppId: "app" }).success).toBe(false);
  });
});
