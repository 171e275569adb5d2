import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audioFixture } from "../../test/support/audio-fixtures";
import { type BlobDatabase, openBlobDatabase } from "../../test/support/blob-database";
import { type S3Emulator, startS3Emulator } from "../../test/support/s3-emulator";
import { renditionKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import { createFsBlobStore } from "../blobs/fs-blob-store";
import { createS3BlobStore } from "../blobs/s3-blob-store";
import type { HttpResponse } from "../http-message/http-message";
import { ingestAudio } from "./ingest-audio";
import { playAudio } from "./play-audio";
import { signPlaybackUrl } from "./playback-url";
import { rawCid } from "../blobs/raw-cid";
import type { DomainError } from "../domain-error";
import { errorStatus } from "../http/errors";
import { errorResponse } from "../http/pipeline";
import { runInvocation } from "../invocation/run-invocation";
import { ProviderError } from "../providers/provider-port";
import type { RenditionBuilder } from "../providers/rendition-builder";
import { logRecorder } from "../../test/support/log-recorder";

const secret = "playback-signing-key-at-least-32-characters";
const appId = "alpha";
const signedAt = new Date("2025-06-01T12:00:00.000Z");
const exp = signedAt.getTime() / 1000 + 3600;
const later = (seconds: number) => new Date(signedAt.getTime() + seconds * 1000);

const bodyOf = async (response: HttpResponse) => {
  const body = response.body;
  if (body === undefined) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    const { code } = error as DomainError;
    return { status: errorStatus[code], code };
  }
  throw new Error("expected a rejection");
};

interface Setup {
  store: BlobStore;
  db: BlobDatabase;
  bytes: Buffer;
  key: string;
  cid: string;
  url: string;
}

/** An upload of the fixture of `mimeType` into the setup's store and database, signed. */
const uploadInto = async ({ store, db }: Pick<Setup, "store" | "db">, mimeType: "audio/ogg" | "audio/mpeg"): Promise<Setup> => {
  const bytes = (await audioFixture(mimeType)).bytes;
  const { key, blob } = await ingestAudio({ store, sql: db.sql, appId, mimeType, source: Readable.from([bytes]) });
  const url = signPlaybackUrl({ baseUrl: "https://svc.example", key, secret, now: signedAt });
  return { store, db, bytes, key, cid: blob.ref.$link, url };
};

const setUp = async (store: BlobStore): Promise<Setup> => uploadInto({ store, db: await openBlobDatabase() }, "audio/ogg");

const play = (
  s: Setup,
  options: { url?: string; method?: string; range?: string; ifNoneMatch?: string; now?: Date; edit?: (q: URLSearchParams) => void } = {},
) => {
  const query = new URL(options.url ?? s.url).searchParams;
  options.edit?.(query);
  const { method = "GET", range, ifNoneMatch, now = later(60) } = options;
  return playAudio({ store: s.store, sql: s.db.sql, secret, query, method, range, ifNoneMatch, now });
};

const messageOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return (error as DomainError).message;
  }
  throw new Error("expected a rejection");
};

/** If-None-Match naming the tag (alone, in a list, weak, or `*`) is 304 with the caching headers and no body. */
const expectNotModified = async (s: Setup, etag: string, edit?: (q: URLSearchParams) => void) => {
  for (const ifNoneMatch of [etag, `"other", ${etag}`, `W/${etag}`, "*"]) {
    const response = await play(s, { ifNoneMatch, now: later(600), edit });
    expect(response.status, ifNoneMatch).toBe(304);
    expect(response.headers).toEqual({ ETag: etag, "Cache-Control": "private, max-age=3000" });
    expect(response.body).toBeUndefined();
  }
  expect((await play(s, { ifNoneMatch: '"other"', edit })).status).not.toBe(304);
};

describe("playback from the filesystem store", () => {
  let dir: string;
  let s: Setup;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "play-"));
    s = await setUp(createFsBlobStore(dir));
  });
  afterAll(async () => {
    await s.db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("streams the whole blob with its recorded type, length, Accept-Ranges, the CID as ETag and a max-age no longer than the signature", async () => {
    const response = await play(s, { now: later(600) });
    expect(response.status).toBe(200);
    expect(response.headers).toMatchObject({
      "Content-Type": "audio/ogg",
      "Content-Length": String(s.bytes.length),
      "Accept-Ranges": "bytes",
      ETag: `"${s.cid}"`,
      "Cache-Control": "private, max-age=3000",
    });
    expect(response.headers["Content-Range"]).toBeUndefined();
    expect((await bodyOf(response))!.equals(s.bytes)).toBe(true);
    expect((await play(s, { now: later(3590) })).headers["Cache-Control"]).toBe("private, max-age=10");
  });

  it("answers a single Range with 206 and Content-Range: first byte, middle, suffix, open-ended", async () => {
    const size = s.bytes.length;
    const cases: [string, number, number][] = [
      ["bytes=0-0", 0, 0],
      ["bytes=100-1099", 100, 1099],
      ["bytes=-500", size - 500, size - 1],
      ["bytes=100-", 100, size - 1],
    ];
    for (const [range, start, end] of cases) {
      const response = await play(s, { range });
      expect(response.status, range).toBe(206);
      expect(response.headers["Content-Range"], range).toBe(`bytes ${start}-${end}/${size}`);
      expect(response.headers["Content-Length"], range).toBe(String(end - start + 1));
      expect((await bodyOf(response))!.equals(s.bytes.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it("a range starting past the end is 416 with Content-Range: bytes */<size>", async () => {
    const response = await play(s, { range: `bytes=${s.bytes.length}-` });
    expect(response.status).toBe(416);
    expect(response.headers["Content-Range"]).toBe(`bytes */${s.bytes.length}`);
  });

  it("a multi-range request is answered with the whole body (200)", async () => {
    const response = await play(s, { range: "bytes=0-1,5-6" });
    expect(response.status).toBe(200);
    expect((await bodyOf(response))!.length).toBe(s.bytes.length);
  });

  it("HEAD answers the same headers as GET, without a body", async () => {
    for (const range of [undefined, "bytes=0-0"]) {
      const get = await play(s, { range });
      const head = await play(s, { range, method: "HEAD" });
      expect(head.status).toBe(get.status);
      expect(head.headers).toEqual(get.headers);
      expect(head.body).toBeUndefined();
      (get.body as Readable).destroy();
    }
  });

  it("refuses unsigned (403), tampered (403), expired (403), traversal (403), a missing url (400) and an unknown format (400)", async () => {
    expect(await codeOf(play(s, { edit: (q) => q.delete("sig") }))).toEqual({ status: 403, code: "FORBIDDEN" });
    expect(await codeOf(play(s, { edit: (q) => q.set("exp", String(exp + 1)) }))).toEqual({ status: 403, code: "FORBIDDEN" });
    expect(await codeOf(play(s, { now: later(3600) }))).toEqual({ status: 403, code: "FORBIDDEN" });
    expect(await codeOf(play(s, { url: `https://svc.example/api/v1/audio?url=blobs/../x&exp=${exp}&sig=x` }))).toEqual({ status: 403, code: "FORBIDDEN" });
    expect(await codeOf(play(s, { url: `https://svc.example/api/v1/audio?url=blobs/%2e%2e/x&exp=${exp}&sig=x` }))).toEqual({ status: 403, code: "FORBIDDEN" });
    expect(await codeOf(play(s, { url: `https://svc.example/api/v1/audio?url=renditions/${appId}/${s.cid}.mp3&exp=${exp}&sig=x` }))).toEqual({
      status: 403,
      code: "FORBIDDEN",
    });
    expect(await codeOf(play(s, { edit: (q) => q.delete("url") }))).toEqual({ status: 400, code: "VALIDATION_ERROR" });
    expect(await codeOf(play(s, { edit: (q) => q.set("format", "flac") }))).toEqual({ status: 400, code: "VALIDATION_ERROR" });
  });

  it("If-None-Match with the CID as ETag is 304 Not Modified, with Cache-Control and ETag", () => expectNotModified(s, `"${s.cid}"`));

  it("a signature that fails is 403 even with a matching If-None-Match: only a valid URL revalidates", async () => {
    expect(await codeOf(play(s, { ifNoneMatch: `"${s.cid}"`, now: later(3600) }))).toEqual({ status: 403, code: "FORBIDDEN" });
  });

  it("format=mp3 with no rendition and no rendition service is 404 NOT_FOUND saying so; an existing rendition is served as audio/mpeg, cached and revalidated", async () => {
    const miss = play(s, { edit: (q) => q.set("format", "mp3") });
    expect(await messageOf(miss)).toBe("no mp3 rendition of this audio, and no rendition service is configured to build one");
    expect(await codeOf(play(s, { edit: (q) => q.set("format", "mp3") }))).toEqual({ status: 404, code: "NOT_FOUND" });
    const mp3 = (await audioFixture("audio/mpeg")).bytes;
    await s.store.writeAtomic(renditionKey(s.key, "mp3"), Readable.from([mp3]));
    const response = await play(s, { edit: (q) => q.set("format", "mp3") });
    expect(response.status).toBe(200);
    expect(response.headers["Content-Type"]).toBe("audio/mpeg");
    expect(response.headers.ETag).toBe(`"${s.cid}.mp3"`);
    expect(response.headers["Cache-Control"]).toBe("private, max-age=3540");
    expect((await bodyOf(response))!.equals(mp3)).toBe(true);
    await expectNotModified(s, `"${s.cid}.mp3"`, (q) => q.set("format", "mp3"));
  });

  it("format=mp3 of an mp3 upload serves the upload itself, its own rendition, with no rendition service and nothing built", async () => {
    const mp3 = await uploadInto(s, "audio/mpeg");
    const response = await play(mp3, { edit: (q) => q.set("format", "mp3") });
    expect(response.status).toBe(200);
    expect(response.headers["Content-Type"]).toBe("audio/mpeg");
    expect(response.headers.ETag).toBe(`"${mp3.cid}.mp3"`);
    expect((await bodyOf(response))!.equals(mp3.bytes)).toBe(true);
    expect(await s.store.stat(renditionKey(mp3.key, "mp3"))).toBeNull();
  });

  it("a correctly signed path to a blob the tenant never uploaded is 404", async () => {
    const key = `blobs/${appId}/${rawCid(Buffer.from("never uploaded"))}`;
    const url = signPlaybackUrl({ baseUrl: "https://svc.example", key, secret, now: signedAt });
    expect(await codeOf(play(s, { url }))).toEqual({ status: 404, code: "NOT_FOUND" });
  });
});

describe("playback from the S3 store", () => {
  let emulator: S3Emulator;
  let s: Setup;
  beforeAll(async () => {
    emulator = await startS3Emulator();
    s = await setUp(createS3BlobStore({ bucket: emulator.bucket, client: emulator.client }));
  });
  afterAll(async () => {
    await s.db.close();
    await emulator.stop();
  });

  const expiryOf = (location: string) => {
    const params = new URL(location).searchParams;
    const date = params.get("X-Amz-Date")!;
    const signed = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), +date.slice(9, 11), +date.slice(11, 13), +date.slice(13, 15));
    return signed / 1000 + Number(params.get("X-Amz-Expires"));
  };

  it("answers 302 to a presigned GET that expires with the signature, cached until then (Cache-Control: private, max-age; the CID as ETag)", async () => {
    for (const elapsed of [1, 600, 3599]) {
      const response = await play(s, { now: later(elapsed) });
      expect(response.status).toBe(302);
      expect(response.headers["Cache-Control"]).toBe(`private, max-age=${3600 - elapsed}`);
      expect(response.headers.ETag).toBe(`"${s.cid}"`);
      expect(response.body).toBeUndefined();
      // A browser keeps the redirect for max-age, so the GET it points at must live exactly as long, and no longer.
      expect(expiryOf(response.headers.Location!), `after ${elapsed}s`).toBe(exp);
    }
  });

  it("If-None-Match with the CID is 304 Not Modified instead of a redirect", () => expectNotModified(s, `"${s.cid}"`));

  it("the presigned GET serves the blob's bytes with its recorded type", async () => {
    const response = await play(s, { now: new Date() , url: signPlaybackUrl({ baseUrl: "https://svc.example", key: s.key, secret, now: new Date() }) });
    const fetched = await fetch(response.headers.Location!);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("content-type")).toBe("audio/ogg");
    expect(Buffer.from(await fetched.arrayBuffer()).equals(s.bytes)).toBe(true);
  });

  it("HEAD redirects to a presigned HEAD", async () => {
    const now = new Date();
    const response = await play(s, { method: "HEAD", now, url: signPlaybackUrl({ baseUrl: "https://svc.example", key: s.key, secret, now }) });
    expect(response.status).toBe(302);
    const fetched = await fetch(response.headers.Location!, { method: "HEAD" });
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("content-length")).toBe(String(s.bytes.length));
  });

  it("format=mp3 with no rendition is 404 NOT_FOUND, not a redirect to a missing object", async () => {
    expect(await codeOf(play(s, { edit: (q) => q.set("format", "mp3") }))).toEqual({ status: 404, code: "NOT_FOUND" });
  });

  it("an existing mp3 rendition redirects like the original, with its own tag, and revalidates to 304", async () => {
    await s.store.writeAtomic(renditionKey(s.key, "mp3"), Readable.from([(await audioFixture("audio/mpeg")).bytes]));
    const response = await play(s, { edit: (q) => q.set("format", "mp3") });
    expect(response.status).toBe(302);
    expect(response.headers).toMatchObject({ ETag: `"${s.cid}.mp3"`, "Cache-Control": "private, max-age=3540" });
    await expectNotModified(s, `"${s.cid}.mp3"`, (q) => q.set("format", "mp3"));
  });
});

describe("a rendition-service outage during playback", () => {
  let dir: string;
  let s: Setup;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "play-outage-"));
    s = await setUp(createFsBlobStore(dir));
  });
  afterAll(async () => {
    await s.db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a rendition-service outage is logged once as dependency `rendition` unavailable and once available again, each miss answered the generic 503", async () => {
    const { logger, lines } = logRecorder();
    const failures = [
      new ProviderError("retry", "rendition render: HTTP 503"),
      new ProviderError("retry", "rendition render: network error", "provider_error", { cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) }),
    ];
    const mp3 = (await audioFixture("audio/mpeg")).bytes;
    const renditions: RenditionBuilder = {
      async buildMp3() {
        const failure = failures.shift();
        if (failure) throw failure;
        await s.store.writeAtomic(renditionKey(s.key, "mp3"), Readable.from([mp3]));
      },
    };
    // As the route pipeline runs a request: one invocation, its failure answered through `failed`.
    const request = () =>
      runInvocation({ name: "get-audio", deps: { logger, sql: s.db.sql }, message: "request" }, async (invocation) => {
        const query = new URL(s.url).searchParams;
        query.set("format", "mp3");
        let response: HttpResponse;
        try {
          response = await playAudio({ store: s.store, sql: invocation.sql, secret, query, method: "GET", now: later(60), renditions });
        } catch (error) {
          response = errorResponse(invocation.failed(error), invocation.requestId);
        }
        invocation.annotate({ status: response.status });
        return response;
      });
    const down = [await request(), await request()];
    for (const response of down) {
      expect(response.status).toBe(503);
      expect(JSON.parse(String(response.body)).error).toEqual({ code: "SERVICE_UNAVAILABLE", message: "a dependency is unavailable; retry later" });
    }
    const back = await request();
    expect(back.status).toBe(200);
    (back.body as Readable).destroy();

    const outage = lines.filter((line) => line.message !== "request");
    expect(outage.map(({ level, message, fields }) => ({ level, message, dependency: fields.dependency }))).toEqual([
      { level: "warn", message: "dependency unavailable", dependency: "rendition" },
      { level: "warn", message: "dependency available again", dependency: "rendition" },
    ]);
    expect(outage[0]!.fields.reason).toBe("rendition render: HTTP 503");
    expect(outage[1]!.fields.failedRequests).toBe(2);
    expect(lines.filter((line) => line.message === "request").map((line) => [line.fields.status, line.fields.errorCode])).toEqual([
      [503, "SERVICE_UNAVAILABLE"],
      [503, "SERVICE_UNAVAILABLE"],
      [200, undefined],
    ]);
  });
});
