import { createHash } from "node:crypto";
import * as dagCbor from "@ipld/dag-cbor";
import { CID } from "multiformats/cid";
import { create as createDigest } from "multiformats/hashes/digest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replyTo } from "./support/post-bodies";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { serviceMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

interface View {
  uri: string;
  cid: string;
  record: { embed?: { audio: { ref: { $link: string } } } } & Record<string, unknown>;
}

/**
 * The cid a PDS would compute from a view's record, written out by hand: the record's IPLD form (the blob's
 * `{ "$link": … }` read as a CID link, as AT Protocol's lex-json rules say), dag-cbor, sha2-256, CIDv1 base32.
 */
const pdsCid = (record: View["record"]): string => {
  const ipld = record.embed
    ? { ...record, embed: { ...record.embed, audio: { ...record.embed.audio, ref: CID.parse(record.embed.audio.ref.$link) } } }
    : record;
  const digest = createDigest(0x12, createHash("sha256").update(dagCbor.encode(ipld)).digest());
  return CID.createV1(dagCbor.code, digest).toString();
};

describe.each(serviceMatrix)("a post's cid over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  it("a post with audio has the cid of its record's IPLD form (the blob's $link read as a CID link), in a single read and in lists", async () => {
    const blob = await seedAudio({ sql: svc.deps.sql, blobs: svc.deps.blobs }, "alpha");
    const created = await svc.post("/api/v1/posts", { actor: "cid-a", json: { ...audioPost(blob), text: "", langs: ["en"] } });
    expect(created.status).toBe(201);
    const view = (await svc.get(`/api/v1/posts/${created.json.data.postId}`, { actor: "cid-a" })).json.data as View;
    expect(view.record.embed?.audio.ref).toEqual({ $link: blob.ref.$link });
    expect(view.cid).toBe(pdsCid(view.record));
    // Not the cid of the lex-json text as it stands, with $link a plain string map.
    const digest = createDigest(0x12, createHash("sha256").update(dagCbor.encode(view.record)).digest());
    expect(view.cid).not.toBe(CID.createV1(dagCbor.code, digest).toString());

    // A reply naming it by that cid is accepted, and a list shows the same record and cid.
    const answered = await svc.post("/api/v1/posts", { actor: "cid-b", json: replyTo(view) });
    expect(answered.status).toBe(201);
    const own = (await svc.get("/api/v1/posts", { actor: "cid-a" })).json.data.items as View[];
    expect(own).toHaveLength(1);
    expect(own[0]).toMatchObject({ uri: view.uri, cid: view.cid, record: view.record });
    const replies = (await svc.get(`/api/v1/posts/${created.json.data.postId}/replies`)).json.data.items as View[];
    expect(replies).toHaveLength(1);
    expect(replies[0]!.cid).toBe(pdsCid(replies[0]!.record));
  });
});
