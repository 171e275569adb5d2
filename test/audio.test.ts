import { createHash } from "node:crypto";
import { CID } from "multiformats/cid";
import * as raw from "multiformats/codecs/raw";
import { create as digestOf } from "multiformats/hashes/digest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptedMimeTypes } from "../core/records/accepted-types";
import { audioFixture } from "./support/audio-fixtures";
import { multipartBody } from "./support/multipart-body";
import { createPost } from "./support/post-bodies";
import { serviceMatrix } from "./support/service-matrix";
import { storedKeys } from "./support/stored-keys";
import { startTestService, type TestService } from "./support/test-service";

const independentCid = (bytes: Buffer) => CID.createV1(raw.code, digestOf(0x12, createHash("sha256").update(bytes).digest())).toString();

describe.each(serviceMatrix)("audio over $name", ({ driver, sql }) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ driver, sql });
  });
  afterAll(() => svc?.close());

  const upload = async (actor: string, bytes: Buffer, type?: string, extra: { token?: string; ip?: string } = {}) => {
    const { body, contentType } = await multipartBody([{ name: "file", bytes, type }]);
    return svc.post("/api/v1/audio/upload", { actor, body, headers: { "content-type": contentType }, ...extra });
  };
  const storedBlobs = async () => (await storedKeys(svc.deps.blobs, "blobs/")).length;
  const pathOf = (url: string) => url.slice(svc.baseUrl.length);

  it.each(acceptedMimeTypes)("uploading %s answers 201 { blob } whose CID is computed independently from the bytes", async (mimeType) => {
    const fixture = await audioFixture(mimeType);
    const res = await upload(`u-${mimeType}`, fixture.bytes, mimeType);
    expect(res.status).toBe(201);
    expect(res.json.data).toEqual({
      blob: { $type: "blob", ref: { $link: independentCid(fixture.bytes) }, mimeType, size: fixture.bytes.length },
    });
  });

  it("identical bytes give the same CID and are stored once", async () => {
    const fixture = await audioFixture("audio/wav");
    const before = await storedBlobs();
    const a = await upload("u-dup", fixture.bytes, "audio/wav");
    const b = await upload("u-dup", fixture.bytes, "audio/wav");
    expect(a.json.data.blob.ref.$link).toBe(b.json.data.blob.ref.$link);
    expect(await storedBlobs()).toBeLessThanOrEqual(before + 1);
  });

  it.each([
    ["a codec parameter", "audio/webm;codecs=opus", "audio/webm", "UNSUPPORTED_MEDIA_TYPE"],
    ["a type off the list", "audio/flac", "audio/wav", "UNSUPPORTED_MEDIA_TYPE"],
    ["bytes of another family than declared", "audio/mpeg", "audio/wav", "UNSUPPORTED_MEDIA_TYPE"],
    // The match is exact, case included: an accepted type spelled in other case is not on the list.
    ["an accepted type in upper case (AUDIO/WAV)", "AUDIO/WAV", "audio/wav", "UNSUPPORTED_MEDIA_TYPE"],
    ["an accepted type in mixed case (Audio/Mpeg)", "Audio/Mpeg", "audio/mpeg", "UNSUPPORTED_MEDIA_TYPE"],
  ] as const)("an upload with %s is refused and nothing is stored", async (_, declared, real, code) => {
    const before = await storedBlobs();
    const res = await upload("u-bad", (await audioFixture(real)).bytes, declared);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe(code);
    expect(await storedBlobs()).toBe(before);
  });

  it("MediaRecorder's type audio/webm;codecs=opus is a 400 whose message lists the accepted types and says to drop the parameters", async () => {
    const res = await upload("u-recorder", (await audioFixture("audio/webm")).bytes, "audio/webm;codecs=opus");
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    for (const type of acceptedMimeTypes) expect(res.json.error.message).toContain(type);
    expect(res.json.error.message).toContain('drop parameters such as codecs and send "audio/webm"');
  });

  it("a lying Content-Type (text declared audio/wav) is 400 UNSUPPORTED_MEDIA_TYPE", async () => {
    const res = await upload("u-lie", Buffer.from("just some text, not audio at all ".repeat(200)), "audio/wav");
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  it("an upload over 25 MiB is 400 FILE_TOO_LARGE and nothing is stored", async () => {
    const before = await storedBlobs();
    const wav = (await audioFixture("audio/wav")).bytes;
    const big = Buffer.alloc(26_214_401);
    wav.copy(big);
    const res = await upload("u-big", big, "audio/wav");
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("FILE_TOO_LARGE");
    expect(await storedBlobs()).toBe(before);
  });

  it.each([null, ""])("the part named file is the upload without a filename too (filename %j: RFC 7578 makes it optional)", async (filename) => {
    const wav = (await audioFixture("audio/wav")).bytes;
    const { body, contentType } = await multipartBody([{ name: "file", bytes: wav, type: "audio/wav", filename }]);
    const res = await svc.post("/api/v1/audio/upload", { actor: "u-nameless", body, headers: { "content-type": contentType } });
    expect(res.status).toBe(201);
    expect(res.json.data.blob.ref.$link).toBe(independentCid(wav));
  });

  it("two parts, or a missing file field, are 400 VALIDATION_ERROR", async () => {
    const wav = (await audioFixture("audio/wav")).bytes;
    const two = await multipartBody([
      { name: "file", bytes: wav, type: "audio/wav" },
      { name: "file", bytes: wav, type: "audio/wav" },
    ]);
    const res2 = await svc.post("/api/v1/audio/upload", { actor: "u-parts", body: two.body, headers: { "content-type": two.contentType } });
    expect(res2.status).toBe(400);
    expect(res2.json.error.code).toBe("VALIDATION_ERROR");
    const other = await multipartBody([{ name: "audio", bytes: wav, type: "audio/wav" }]);
    const res3 = await svc.post("/api/v1/audio/upload", { actor: "u-parts", body: other.body, headers: { "content-type": other.contentType } });
    expect(res3.status).toBe(400);
    expect(res3.json.error.code).toBe("VALIDATION_ERROR");
  });

  it("an epilogue of 64 KiB after the close delimiter is ignored and one of 1 MiB is 400 VALIDATION_ERROR storing nothing, on every driver", async () => {
    const wav = (await audioFixture("audio/wav")).bytes;
    const { body, contentType } = await multipartBody([{ name: "file", bytes: wav, type: "audio/wav" }]);
    const ignored = await svc.post("/api/v1/audio/upload", { actor: "u-epilogue", body: Buffer.concat([body, Buffer.alloc(64 * 1024, "e")]), headers: { "content-type": contentType } });
    expect(ignored.status).toBe(201);
    // Other bytes (a new CID), so that a wrongly accepted upload would store a blob of its own.
    const other = Buffer.from(wav);
    other.writeUInt8(other.readUInt8(other.length - 1) ^ 1, other.length - 1);
    const second = await multipartBody([{ name: "file", bytes: other, type: "audio/wav" }]);
    const before = await storedBlobs();
    const refused = await svc.post("/api/v1/audio/upload", {
      actor: "u-epilogue",
      body: Buffer.concat([second.body, Buffer.alloc(1 << 20, "e")]),
      headers: { "content-type": second.contentType },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe("VALIDATION_ERROR");
    expect(await storedBlobs()).toBe(before);
  });

  it("an upload needs the acting actor", async () => {
    const { body, contentType } = await multipartBody([{ name: "file", bytes: (await audioFixture("audio/wav")).bytes, type: "audio/wav" }]);
    const res = await svc.post("/api/v1/audio/upload", { body, headers: { "content-type": contentType } });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe("ACTING_ACTOR_REQUIRED");
  });

  describe("posts with audio", () => {
    it("a good embed hydrates into a view whose signed url plays the exact uploaded bytes, with durationMs measured from them", async () => {
      const fixture = await audioFixture("audio/mpeg");
      const { blob } = (await upload("pa-1", fixture.bytes, "audio/mpeg")).json.data;
      const post = await createPost(svc, "pa-1", { text: "", embed: { $type: "dev.svc.embed.audio", audio: blob } });
      expect(post.record.embed).toEqual({ $type: "dev.svc.embed.audio", audio: blob });
      const embed = (post as unknown as { embed: Record<string, unknown> }).embed;
      expect(embed).toMatchObject({ $type: "dev.svc.embed.audio#view", mimeType: "audio/mpeg", size: fixture.bytes.length });
      expect(embed.durationMs).toBeGreaterThan(900);
      expect(embed.durationMs).toBeLessThan(1200);
      const url = embed.url as string;
      expect(url.startsWith(`${svc.baseUrl}/api/v1/audio?url=blobs/alpha/${blob.ref.$link}&exp=`)).toBe(true);
      const played = await svc.get(pathOf(url), { token: null });
      expect(played.status).toBe(200);
      expect(played.body.equals(fixture.bytes)).toBe(true);
      expect(played.headers["content-type"]).toBe("audio/mpeg");
    });

    it("playback honours a single Range with 206 and answers HEAD without a body", async () => {
      const fixture = await audioFixture("audio/ogg");
      const { blob } = (await upload("pa-2", fixture.bytes, "audio/ogg")).json.data;
      const post = await createPost(svc, "pa-2", { text: "seek", embed: { $type: "dev.svc.embed.audio", audio: blob } });
      const path = pathOf((post as unknown as { embed: { url: string } }).embed.url);
      const part = await svc.get(path, { token: null, headers: { range: "bytes=10-19" } });
      expect(part.status).toBe(206);
      expect(part.headers["content-range"]).toBe(`bytes 10-19/${fixture.bytes.length}`);
      expect(part.body.equals(fixture.bytes.subarray(10, 20))).toBe(true);
      const head = await svc.call("HEAD", path, { token: null });
      expect(head.status).toBe(200);
      expect(head.headers["content-length"]).toBe(String(fixture.bytes.length));
      expect(head.body.length).toBe(0);
      const past = await svc.get(path, { token: null, headers: { range: `bytes=${fixture.bytes.length + 5}-` } });
      expect(past.status).toBe(416);
    });

    it("a Range under an If-Range that names other bytes (another tag, or a date) is ignored: 200 with the whole file", async () => {
      const fixture = await audioFixture("audio/ogg");
      const { blob } = (await upload("pa-2r", fixture.bytes, "audio/ogg")).json.data;
      const post = await createPost(svc, "pa-2r", { text: "resume", embed: { $type: "dev.svc.embed.audio", audio: blob } });
      const path = pathOf((post as unknown as { embed: { url: string } }).embed.url);
      const etag = (await svc.call("HEAD", path, { token: null })).headers.etag!;
      const same = await svc.get(path, { token: null, headers: { range: "bytes=10-19", "if-range": etag } });
      expect(same.status).toBe(206);
      for (const other of ['"another-tag"', `W/${etag}`, new Date().toUTCString()]) {
        const whole = await svc.get(path, { token: null, headers: { range: "bytes=10-19", "if-range": other } });
        expect(whole.status, other).toBe(200);
        expect(whole.headers["content-range"], other).toBeUndefined();
        expect(whole.body.equals(fixture.bytes), other).toBe(true);
      }
    });

    it("a tampered playback URL is 403 FORBIDDEN", async () => {
      const fixture = await audioFixture("audio/wav");
      const { blob } = (await upload("pa-3", fixture.bytes, "audio/wav")).json.data;
      const post = await createPost(svc, "pa-3", { text: "t", embed: { $type: "dev.svc.embed.audio", audio: blob } });
      const path = pathOf((post as unknown as { embed: { url: string } }).embed.url);
      const res = await svc.get(path.replace(/exp=\d+/, (m) => `exp=${Number(m.slice(4)) + 60}`), { token: null });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe("FORBIDDEN");
    });

    it.each([
      ["an unknown blob", (b: Record<string, unknown>) => ({ ...b, ref: { $link: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku" } })],
      ["a wrong size", (b: Record<string, unknown>) => ({ ...b, size: (b.size as number) + 1 })],
      ["a wrong MIME type", (b: Record<string, unknown>) => ({ ...b, mimeType: "audio/ogg" })],
    ])("an embed with %s is a 400", async (_, mutate) => {
      const { blob } = (await upload("pa-4", (await audioFixture("audio/wav")).bytes, "audio/wav")).json.data;
      const res = await svc.post("/api/v1/posts", { actor: "pa-4x", json: { text: "x", embed: { $type: "dev.svc.embed.audio", audio: mutate(blob) } } });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe("VALIDATION_ERROR");
    });

    it("an embed naming another tenant's blob is a 400", async () => {
      // Bytes alpha never uploaded: a WAV with a trailer of its own.
      const bytes = Buffer.concat([(await audioFixture("audio/wav")).bytes, Buffer.from("beta only")]);
      const { blob } = (await upload("pa-5", bytes, "audio/wav", { token: svc.tenants.beta.token })).json.data;
      const res = await svc.post("/api/v1/posts", { actor: "pa-5", json: { text: "x", embed: { $type: "dev.svc.embed.audio", audio: blob } } });
      expect(res.status).toBe(400);
    });
  });

  it("uploads are limited to 20 per hour per actor", async () => {
    const bytes = (await audioFixture("audio/wav")).bytes;
    for (let i = 0; i < 20; i++) expect((await upload("ul-1", bytes, "audio/wav")).status).toBe(201);
    const limited = await upload("ul-1", bytes, "audio/wav");
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
  });

  it("anonymous playback is limited per client IP: 60 per minute", async () => {
    const fixture = await audioFixture("audio/m4a");
    const { blob } = (await upload("pl-1", fixture.bytes, "audio/m4a")).json.data;
    const post = await createPost(svc, "pl-1", { text: "x", embed: { $type: "dev.svc.embed.audio", audio: blob } });
    const path = pathOf((post as unknown as { embed: { url: string } }).embed.url);
    for (let i = 0; i < 60; i++) expect((await svc.get(path, { token: null, ip: "203.0.113.5", headers: { range: "bytes=0-0" } })).status).toBe(206);
    expect((await svc.get(path, { token: null, ip: "203.0.113.5" })).status).toBe(429);
    expect((await svc.get(path, { token: null, ip: "203.0.113.6", headers: { range: "bytes=0-0" } })).status).toBe(206);
  });

  it("the direct-to-S3 routes answer 404 NOT_FOUND on the file store", async () => {
    const created = await svc.post("/api/v1/audio/uploads", { actor: "d-1", json: { mimeType: "audio/wav", size: 100 } });
    expect(created.status).toBe(404);
    expect(created.json.error.code).toBe("NOT_FOUND");
    const completed = await svc.post("/api/v1/audio/uploads/abc/complete", { actor: "d-1" });
    expect(completed.status).toBe(404);
  });

  it("/health reports blobs present once audio is stored", async () => {
    const res = await svc.get("/health", { token: null });
    expect(res.json.data.blobs).toBe("present");
  });
});
