import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPost } from "./support/post-bodies";
import { audioPost, seedAudio } from "./support/seeded-audio";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/** JSON write bodies (POST and PATCH on posts): `application/json` only, and at most 256 KiB. Rules of the HTTP edge. */
describe.each(edgeMatrix)("JSON write bodies over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  let n = 0;
  /** A fresh actor per write: the write limit (10 per 15 minutes) must not decide any answer here. */
  const actor = (label: string) => `jb-${label}-${n++}`;
  const ownPosts = async (who: string) => (await svc.get("/api/v1/posts", { actor: who })).json.data.items as unknown[];
  /** An audio post of `author`, whose stages a PATCH would request. */
  const audioPostOf = async (author: string) => {
    const post = await createPost(svc, author, audioPost(await seedAudio(svc.deps, "alpha")));
    return post.uri.split("/").pop()!;
  };
  const patch = (postId: string, author: string, body: string, headers: Record<string, string>) =>
    svc.call("PATCH", `/api/v1/posts/${postId}`, { actor: author, body, headers });

  describe("a body not declared application/json is 400 VALIDATION_ERROR, and nothing is stored", () => {
    // No Content-Type at all: the test service sends a byte body without one, as fetch does for bytes.
    const declared: [string, Record<string, string>][] = [
      ["text/plain", { "content-type": "text/plain" }],
      ["application/x-www-form-urlencoded", { "content-type": "application/x-www-form-urlencoded" }],
      ["no Content-Type", {}],
    ];

    it.each(declared)("POST /api/v1/posts with %s", async (_, headers) => {
      const who = actor("post");
      const res = await svc.post("/api/v1/posts", { actor: who, body: JSON.stringify({ text: "valid JSON all the same" }), headers });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
      expect(await ownPosts(who)).toEqual([]);
    });

    it.each(declared)("PATCH /api/v1/posts/{postId} with %s", async (_, headers) => {
      const author = actor("patch");
      const postId = await audioPostOf(author);
      const res = await patch(postId, author, JSON.stringify({ processing: { waveform: true } }), headers);
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
      // No stage was requested: a PATCH taken would have settled waveform (skipped, with no dispatcher here).
      const view = await svc.get(`/api/v1/posts/${postId}`, { actor: author });
      expect(view.json.data).not.toHaveProperty("processing");
    });
  });

  describe("the 256 KiB limit is exact: 262,144 bytes are read, 262,145 are 413 PAYLOAD_TOO_LARGE", () => {
    /** `json` padded with trailing whitespace (still valid JSON, no field added) to exactly `bytes` bytes. */
    const padded = (json: unknown, bytes: number) => {
      const text = JSON.stringify(json);
      const body = text + " ".repeat(bytes - Buffer.byteLength(text));
      expect(Buffer.byteLength(body)).toBe(bytes);
      return body;
    };
    const asJson = { "content-type": "application/json" };

    it("POST /api/v1/posts: a body of exactly the limit is created, one byte more is 413 and stores nothing", async () => {
      const atLimit = actor("post-limit");
      const created = await svc.post("/api/v1/posts", { actor: atLimit, body: padded({ text: "at the limit" }, 262_144), headers: asJson });
      expect(created.status).toBe(201);
      const over = actor("post-over");
      const refused = await svc.post("/api/v1/posts", { actor: over, body: padded({ text: "one byte over" }, 262_145), headers: asJson });
      expect(refused.status).toBe(413);
      expect(refused.json.error.code).toBe("PAYLOAD_TOO_LARGE");
      expect(await ownPosts(over)).toEqual([]);
    });

    it("PATCH /api/v1/posts/{postId}: a body of exactly the limit is taken, one byte more is 413 and requests nothing", async () => {
      const author = actor("patch-limit");
      const [taken, refused] = [await audioPostOf(author), await audioPostOf(author)];
      const atLimit = await patch(taken, author, padded({ processing: { waveform: true } }, 262_144), asJson);
      expect(atLimit.status).toBe(202);
      const over = await patch(refused, author, padded({ processing: { waveform: true } }, 262_145), asJson);
      expect(over.status).toBe(413);
      expect(over.json.error.code).toBe("PAYLOAD_TOO_LARGE");
      expect((await svc.get(`/api/v1/posts/${refused}`, { actor: author })).json.data).not.toHaveProperty("processing");
    });
  });
});
