import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createS3BlobStore } from "../core/blobs/s3-blob-store";
import { audioFixture, pcmWav } from "./support/audio-fixtures";
import { backends } from "./support/databases";
import { multipartBody } from "./support/multipart-body";
import { createPost } from "./support/post-bodies";
import { startS3Emulator, type S3Emulator } from "./support/s3-emulator";
import { slowedSql } from "./support/slowed-sql";
import { startTestService, type TestService } from "./support/test-service";

/** What a browser does with a presigned POST: its fields, then the file. */
const postToBucket = (url: string, fields: Record<string, string>, bytes: Uint8Array, type: string) => {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append("file", new Blob([new Uint8Array(bytes)], { type }));
  return fetch(url, { method: "POST", body: form, redirect: "manual" });
};

/** The S3 blob store behind the same routes, against an S3 emulator on loopback. */
describe.each(["node", "lambda"] as const)("audio on the S3 store over %s", (driver) => {
  let s3: S3Emulator;
  let svc: TestService;
  beforeAll(async () => {
    s3 = await startS3Emulator();
    svc = await startTestService({ driver, sql: backends[0]!.open, blobs: createS3BlobStore({ bucket: s3.bucket, client: s3.client }) });
  });
  afterAll(async () => {
    await svc?.close();
    await s3?.stop();
  });

  it("playback answers 302 to a presigned GET that expires no later than the signature and serves the exact bytes", async () => {
    const fixture = await audioFixture("audio/mpeg");
    const { body, contentType } = await multipartBody([{ name: "file", bytes: fixture.bytes, type: "audio/mpeg" }]);
    const uploaded = await svc.post("/api/v1/audio/upload", { actor: "s3-1", body, headers: { "content-type": contentType } });
    expect(uploaded.status).toBe(201);
    const post = await createPost(svc, "s3-1", { text: "on s3", embed: { $type: "dev.svc.embed.audio", audio: uploaded.json.data.blob } });
    const url = (post as unknown as { embed: { url: string } }).embed.url;
    const exp = Number(new URL(url).searchParams.get("exp"));
    const res = await svc.get(url.slice(svc.baseUrl.length), { token: null });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location!);
    const signedAt = Date.parse(location.searchParams.get("X-Amz-Date")!.replace(/(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z/, "$1-$2-$3T$4:$5:$6Z"));
    expect(signedAt / 1000 + Number(location.searchParams.get("X-Amz-Expires"))).toBeLessThanOrEqual(exp);
    const bytes = Buffer.from(await (await fetch(location)).arrayBuffer());
    expect(bytes.equals(fixture.bytes)).toBe(true);
  });

  it("the 302 is cached until the signature expires (Cache-Control: private, max-age; ETag: the CID), and If-None-Match revalidates it with a 304", async () => {
    const fixture = await audioFixture("audio/ogg");
    const { body, contentType } = await multipartBody([{ name: "file", bytes: fixture.bytes, type: "audio/ogg" }]);
    const { blob } = (await svc.post("/api/v1/audio/upload", { actor: "s3-2", body, headers: { "content-type": contentType } })).json.data;
    const post = await createPost(svc, "s3-2", { text: "cached", embed: { $type: "dev.svc.embed.audio", audio: blob } });
    const path = (post as unknown as { embed: { url: string } }).embed.url.slice(svc.baseUrl.length);
    const exp = Number(new URL(path, svc.baseUrl).searchParams.get("exp"));
    const before = Math.floor(Date.now() / 1000);
    const res = await svc.get(path, { token: null });
    expect(res.status).toBe(302);
    expect(res.headers.etag).toBe(`"${blob.ref.$link}"`);
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(res.headers["cache-control"]!)![1]);
    expect(maxAge).toBeLessThanOrEqual(exp - before);
    expect(maxAge).toBeGreaterThanOrEqual(exp - before - 5);
    const again = await svc.get(path, { token: null, headers: { "if-none-match": `"${blob.ref.$link}"` } });
    expect(again.status).toBe(304);
    expect(again.headers.location).toBeUndefined();
    expect(again.headers.etag).toBe(`"${blob.ref.$link}"`);
  });

  it("S3's answer to the redirect, GET or HEAD, expires when the signature does (Cache-Control: private, Expires), however late a cached 302 is followed", async () => {
    const fixture = await audioFixture("audio/wav");
    const { body, contentType } = await multipartBody([{ name: "file", bytes: fixture.bytes, type: "audio/wav" }]);
    const { blob } = (await svc.post("/api/v1/audio/upload", { actor: "s3-exp", body, headers: { "content-type": contentType } })).json.data;
    const post = await createPost(svc, "s3-exp", { text: "expires", embed: { $type: "dev.svc.embed.audio", audio: blob } });
    const path = (post as unknown as { embed: { url: string } }).embed.url.slice(svc.baseUrl.length);
    const exp = Number(new URL(path, svc.baseUrl).searchParams.get("exp"));
    for (const method of ["GET", "HEAD"] as const) {
      const res = await (method === "GET" ? svc.get(path, { token: null }) : svc.call("HEAD", path, { token: null }));
      expect(res.status).toBe(302);
      const presigned = new URL(res.headers.location!).searchParams;
      // A relative max-age here would give bytes fetched through a redirect cached an hour ago another hour.
      expect(presigned.get("response-cache-control")).toBe("private");
      expect(Date.parse(presigned.get("response-expires")!)).toBe(exp * 1000);
      expect(presigned.get("response-content-type")).toBe("audio/wav");
    }
  });

  it("a direct-to-S3 upload: presigned POST, then complete, answers like the upload route; completing it again answers the same blob", async () => {
    const fixture = await audioFixture("audio/ogg");
    const created = await svc.post("/api/v1/audio/uploads", { actor: "s3-2", json: { mimeType: "audio/ogg", size: fixture.bytes.length } });
    expect(created.status).toBe(201);
    const { uploadId, url, fields } = created.json.data as { uploadId: string; url: string; fields: Record<string, string> };
    const policy = JSON.parse(Buffer.from(fields.Policy!, "base64").toString("utf8"));
    expect(policy.conditions).toEqual(expect.arrayContaining([["eq", "$Content-Type", "audio/ogg"]]));
    const posted = await postToBucket(url, fields, fixture.bytes, "audio/ogg");
    expect(posted.status).toBeLessThan(300);
    const done = await svc.post(`/api/v1/audio/uploads/${uploadId}/complete`, { actor: "s3-2" });
    expect(done.status).toBe(201);
    expect(done.json.data.blob).toMatchObject({ $type: "blob", mimeType: "audio/ogg", size: fixture.bytes.length });
    const again = await svc.post(`/api/v1/audio/uploads/${uploadId}/complete`, { actor: "s3-2" });
    expect(again.status).toBe(201);
    expect(again.json.data.blob).toEqual(done.json.data.blob);
  });

  it("a direct upload counts once against the upload limit: its completion is limited as a read", async () => {
    const fixture = await audioFixture("audio/ogg");
    const actor = "s3-once";
    const start = () => svc.post("/api/v1/audio/uploads", { actor, ip: "10.77.0.1", json: { mimeType: "audio/ogg", size: fixture.bytes.length } });
    const first = await start();
    expect(first.headers["ratelimit-policy"]).toContain('"actor";q=20;w=3600');
    expect(first.headers.ratelimit).toMatch(/^"actor";r=19;/);
    const { uploadId, url, fields } = first.json.data as { uploadId: string; url: string; fields: Record<string, string> };
    expect((await postToBucket(url, fields, fixture.bytes, "audio/ogg")).status).toBeLessThan(300);
    const done = await svc.post(`/api/v1/audio/uploads/${uploadId}/complete`, { actor, ip: "10.77.0.1" });
    expect(done.status).toBe(201);
    expect(done.headers["ratelimit-policy"]).not.toContain("w=3600");
    expect((await start()).headers.ratelimit).toMatch(/^"actor";r=18;/);
  });

  it("a direct upload declaring a type off the list, or over 25 MiB, is refused before any URL is issued", async () => {
    const codec = await svc.post("/api/v1/audio/uploads", { actor: "s3-3", json: { mimeType: "audio/webm;codecs=opus", size: 10 } });
    expect(codec.status).toBe(400);
    expect(codec.json.error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    const big = await svc.post("/api/v1/audio/uploads", { actor: "s3-3", json: { mimeType: "audio/wav", size: 26_214_401 } });
    expect(big.status).toBe(400);
    expect(big.json.error.code).toBe("FILE_TOO_LARGE");
  });
});

/**
 * A completion of 24 MB that passes its request deadline (a database slow to record the blob holds it there): the 503
 * says "retry", and a retry must get the blob. The deadline is one every other request meets on a loaded machine.
 */
describe.each(["node", "lambda"] as const)("a direct upload's completion past its request deadline, over %s", (driver) => {
  let s3: S3Emulator;
  let svc: TestService;
  /** Set to hold the next blob record a second past the deadline. */
  let slowRecord = false;
  beforeAll(async () => {
    s3 = await startS3Emulator();
    const blobs = createS3BlobStore({ bucket: s3.bucket, client: s3.client });
    const sql = slowedSql(backends[0]!.open, (text) => (slowRecord && text.includes("INSERT INTO blobs") ? ((slowRecord = false), 2_500) : undefined));
    svc = await startTestService({ driver, sql, blobs, env: { SVC_REQUEST_DEADLINE_MS: "1500" } });
  });
  afterAll(async () => {
    await svc?.close();
    await s3?.stop();
  });

  it("a completion answered 503 at its deadline is answered its blob when retried, never 404", async () => {
    const wav = pcmWav(24_000_000);
    const created = await svc.post("/api/v1/audio/uploads", { actor: "s3-late", json: { mimeType: "audio/wav", size: wav.length } });
    expect(created.status).toBe(201);
    const { uploadId, url, fields } = created.json.data as { uploadId: string; url: string; fields: Record<string, string> };
    expect((await postToBucket(url, fields, wav, "audio/wav")).status).toBeLessThan(300);
    const statuses: number[] = [];
    let answer;
    slowRecord = true;
    for (let attempt = 0; attempt < 60; attempt += 1) {
      answer = await svc.post(`/api/v1/audio/uploads/${uploadId}/complete`, { actor: "s3-late" });
      statuses.push(answer.status);
      if (answer.status !== 503) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(statuses[0]).toBe(503);
    expect(statuses.at(-1)).toBe(201);
    expect(new Set(statuses)).toEqual(new Set([503, 201]));
    expect(answer!.json.data.blob).toMatchObject({ mimeType: "audio/wav", size: wav.length });
  });
});
