import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, dataApiBackends } from "./support/databases";
import { replyTo } from "./support/post-bodies";
import { audioPost, seedAudio } from "./support/seeded-audio";
import type { DriverName } from "./support/test-service";
import { startTestService, type TestService } from "./support/test-service";

/**
 * A post travels whole in one row of every read that finds it, and the Data API refuses a row over 64 KB: a create
 * whose record (as stored, escapes included) with its author's id and DID would pass 48 KiB is refused, so no post
 * can make itself, its lists and its parent's replies unreadable.
 */
const matrix = [
  { name: "node on pglite", driver: "node" as DriverName, sql: backends[0]!.open },
  ...dataApiBackends.map((backend) => ({ name: `lambda on ${backend.name}`, driver: "lambda" as DriverName, sql: backend.open })),
];

const longDid = `did:plc:${"a".repeat(2040)}`;
/** One grapheme of ten UTF-8 bytes, none of them escaped in JSON: the schema's densest characters that store as sent. */
const dense = "\u00e9" + "\u0301".repeat(4);

describe.each(matrix)("a post's stored row size over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  }, 120_000);
  afterAll(() => svc?.close());

  it("a post whose control characters store as 6-byte escapes past 48 KiB is refused 400 VALIDATION_ERROR naming text, and nothing is stored", async () => {
    const body = {
      text: "\u0001".repeat(2999) + "a" + "\u0301".repeat(13_500),
      selfLabels: Array.from({ length: 10 }, () => "\u0001".repeat(127) + "a" + "\u0301".repeat(576)),
    };
    const created = await svc.post("/api/v1/posts", { actor: "rs-1", actorDid: longDid, json: body });
    expect(created.status, created.body.toString().slice(0, 300)).toBe(400);
    expect(created.json.error.code).toBe("VALIDATION_ERROR");
    expect(created.json.error.issues).toEqual([{ path: ["body", "text"], message: expect.stringMatching(/bytes/) }]);
    const listed = await svc.get("/api/v1/posts", { actor: "rs-1" });
    expect(listed.status).toBe(200);
    expect(listed.json.data.items).toEqual([]);
  });

  it.runIf(driver === "lambda")(
    "the largest post the schema takes without escaped characters, as a reply with audio by 256-character actors with 2 KB DIDs, is stored and read alone and in its lists",
    async () => {
      const wide = (c: string) => c.repeat(256); // 4 bytes a character: the longest actor ids in bytes
      const [parentActor, replyActor] = [wide("\u{1F600}"), wide("\u{1F601}")];
      const parent = await svc.post("/api/v1/posts", { actor: parentActor, actorDid: longDid, json: { text: "the prompt" } });
      expect(parent.status).toBe(201);
      const parentView = (await svc.get(`/api/v1/posts/${parent.json.data.postId}`, { actor: parentActor })).json.data;
      const blob = await seedAudio(svc.deps, "alpha");
      const body = {
        ...audioPost(blob, { transcribe: true, waveform: true, denoise: true, trim: true, normalize: true }),
        ...replyTo(parentView),
        text: dense.repeat(3000),
        langs: ["zh-Hant-TW", "sr-Latn-RS", "en-GB"],
        selfLabels: Array.from({ length: 10 }, () => dense.repeat(128)),
      };
      const created = await svc.post("/api/v1/posts", { actor: replyActor, actorDid: longDid, json: body });
      expect(created.status, created.body.toString().slice(0, 300)).toBe(201);
      const id = created.json.data.postId as string;
      const read = await svc.get(`/api/v1/posts/${id}`, { actor: replyActor });
      expect(read.status, read.body.toString().slice(0, 300)).toBe(200);
      expect(read.json.data.record.text).toBe(body.text);
      for (const path of [`/api/v1/posts/${parent.json.data.postId}/replies`, "/api/v1/posts", `/api/v1/posts?rootAuthor=${encodeURIComponent(parentActor)}`]) {
        const list = await svc.get(path, { actor: path.includes("rootAuthor") ? parentActor : replyActor });
        expect(list.status, `${path}: ${list.body.toString().slice(0, 300)}`).toBe(200);
        expect(list.json.data.items.map((item: { uri: string }) => item.uri.split("/").pop())).toContain(id);
      }
    },
    60_000,
  );
});
