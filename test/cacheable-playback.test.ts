import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audioFixture } from "./support/audio-fixtures";
import { multipartBody } from "./support/multipart-body";
import { edgeMatrix } from "./support/service-matrix";
import { startTestService, type TestService } from "./support/test-service";

/** A 15-minute boundary shortly before the real time, so every clock reading below is plausible. */
const boundary = Math.floor(Date.now() / 900_000) * 900;

describe.each(edgeMatrix)("cacheable playback over $name", ({ driver, sql }) => {
  let svc: TestService;
  let clock: number;
  let postId: string;
  let cid: string;
  let bytes: Buffer;
  const at = (seconds: number) => (clock = (boundary + seconds) * 1000);

  beforeAll(async () => {
    at(1);
    svc = await startTestService({ driver, sql, now: () => new Date(clock) });
    bytes = (await audioFixture("audio/ogg")).bytes;
    const { body, contentType } = await multipartBody([{ name: "file", bytes, type: "audio/ogg" }]);
    const uploaded = await svc.post("/api/v1/audio/upload", { actor: "cache-1", body, headers: { "content-type": contentType } });
    const blob = uploaded.json.data.blob;
    cid = blob.ref.$link;
    const created = await svc.post("/api/v1/posts", { actor: "cache-1", json: { text: "", embed: { $type: "dev.svc.embed.audio", audio: blob } } });
    postId = created.json.data.postId;
  });
  afterAll(() => svc?.close());

  const urlOfPost = async () => (await svc.get(`/api/v1/posts/${postId}`, { actor: "cache-1" })).json.data.embed.url as string;
  const urlInList = async () => (await svc.get("/api/v1/posts?kind=prompt", { actor: "cache-1" })).json.data.items[0].embed.url as string;
  const play = (url: string, headers: Record<string, string> = {}, method = "GET") => svc.call(method, url.slice(svc.baseUrl.length), { token: null, headers });

  it("two reads of the same post within one 15-minute window return the identical embed.url; the next window signs a new one", async () => {
    at(1);
    const first = await urlOfPost();
    expect(Number(new URL(first).searchParams.get("exp"))).toBe(boundary + 900 + 3600);
    at(600);
    expect(await urlOfPost()).toBe(first);
    at(900);
    expect(await urlOfPost()).toBe(first);
    expect(await urlInList()).toBe(first);
    at(901);
    const next = await urlOfPost();
    expect(next).not.toBe(first);
    expect(Number(new URL(next).searchParams.get("exp"))).toBe(boundary + 1800 + 3600);
  });

  it("playback answers carry Cache-Control: private, max-age=<seconds until exp> and ETag: \"<cid>\"", async () => {
    at(1);
    const url = await urlOfPost();
    at(100);
    const played = await play(url);
    expect(played.status).toBe(200);
    expect(played.headers["cache-control"]).toBe(`private, max-age=${900 + 3600 - 100}`);
    expect(played.headers.etag).toBe(`"${cid}"`);
    expect(played.body.equals(bytes)).toBe(true);
  });

  it("If-None-Match with the ETag is 304 Not Modified without a body (GET and HEAD); another tag plays the bytes", async () => {
    at(1);
    const url = await urlOfPost();
    at(200);
    for (const method of ["GET", "HEAD"]) {
      const again = await play(url, { "if-none-match": `"${cid}"` }, method);
      expect(again.status, method).toBe(304);
      expect(again.body.length).toBe(0);
      expect(again.headers.etag).toBe(`"${cid}"`);
      expect(again.headers["cache-control"]).toBe(`private, max-age=${900 + 3600 - 200}`);
    }
    const other = await play(url, { "if-none-match": '"bafkreiother"' });
    expect(other.status).toBe(200);
    expect(other.body.equals(bytes)).toBe(true);
  });
});
