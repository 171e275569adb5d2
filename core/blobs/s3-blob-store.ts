/** The S3 blob store (`SVC_BLOB_BUCKET`): objects appear whole by S3's own guarantee; staging lives under `staging/`. */
import { randomUUID } from "node:crypto";
import { PassThrough, type Readable, Writable } from "node:stream";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { createPresignedPost } from "@aws-sdk/s3-presigned-post";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { assertSafeKey } from "./blob-key";
import { type BlobRead, type S3BlobStore, settleOnce, type StagedWrite } from "./blob-store";

const isNotFound = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === "NotFound" || e.name === "NoSuchKey" || e.$metadata?.httpStatusCode === 404;
};

const copySource = (bucket: string, key: string) => `${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;

/**
 * Every S3 call is bounded: a connection in 2 s, and no more than 10 s without a byte either way (an idle bound, not
 * a total: a 25 MiB object that keeps flowing takes what it takes). Unbounded, a stalled HEAD or GET held its caller
 * for good: a pass reading a blob for its provider kept renewing its lease, so its stage stayed pending.
 */
export const s3CallMs = { connect: 2_000, idle: 10_000 };

/** The S3 client from the standard AWS SDK environment (AWS_REGION, AWS_ENDPOINT_URL_S3...), or at `endpoint` (tests). */
export const createS3Client = (endpoint?: string, bounds = s3CallMs): S3Client =>
  new S3Client({
    ...(endpoint && { endpoint, region: "us-east-1", forcePathStyle: true, credentials: { accessKeyId: "test", secretAccessKey: "test" } }),
    // As the SQS and Data API clients: without throwOnRequestTimeout the handler only warns.
    requestHandler: { connectionTimeout: bounds.connect, requestTimeout: bounds.idle, throwOnRequestTimeout: true },
  });

export interface S3BlobStoreOptions {
  bucket: string;
  /** Defaults to `createS3Client()`. */
  client?: S3Client;
}

export function createS3BlobStore({ bucket, client = createS3Client() }: S3BlobStoreOptions): S3BlobStore {
  /** A Writable feeding a multipart upload; it finishes only when S3 has the whole object. */
  function uploadWriter(key: string, contentType: string | undefined): { stream: Writable; abort(): Promise<void> } {
    const body = new PassThrough();
    const upload = new Upload({ client, params: { Bucket: bucket, Key: key, Body: body, ContentType: contentType } });
    // Started at once: the upload is what drains `body`.
    const done = upload.done();
    let finished = false;
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        if (body.write(chunk)) callback();
        else body.once("drain", () => callback());
      },
      final(callback) {
        body.end();
        done.then(() => {
          finished = true;
          callback();
        }, callback);
      },
      destroy(error, callback) {
        if (!finished) {
          body.destroy();
          upload.abort().catch(() => undefined);
        }
        callback(error);
      },
    });
    // A failed upload stops draining `body`; fail the writer rather than leave it waiting for 'drain'.
    done.catch((error: Error) => stream.destroy(error));
    return { stream, abort: async () => void stream.destroy() };
  }

  const store: S3BlobStore = {
    kind: "s3",
    bucket,

    async stat(key) {
      assertSafeKey(key);
      try {
        const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { size: head.ContentLength ?? 0 };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },

    async read(key, range): Promise<BlobRead | null> {
      assertSafeKey(key);
      try {
        const object = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
        );
        const total = object.ContentRange ? Number(object.ContentRange.split("/")[1]) : object.ContentLength;
        return {
          stream: object.Body as Readable,
          size: total ?? 0,
          version: object.ETag ?? "",
          contentType: object.ContentType,
        };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
    },

    async writeAtomic(key, source, options) {
      assertSafeKey(key);
      // A failing source aborts the multipart upload, so no object (and no dangling parts) is left behind.
      await new Upload({ client, params: { Bucket: bucket, Key: key, Body: source, ContentType: options?.contentType } }).done();
    },

    async stage(options): Promise<StagedWrite> {
      const key = `staging/ingest-${randomUUID()}`;
      const writer = uploadWriter(key, options?.contentType);
      return settleOnce(store, key, writer.stream, async () => {
        await writer.abort();
        await store.delete(key);
      });
    },

    async move(from, to, options) {
      const copied = await store.copy(from, to, options);
      await store.delete(from);
      return copied;
    },

    async copy(from, to, options) {
      assertSafeKey(from);
      assertSafeKey(to);
      const created = !(await store.stat(to));
      if (created) {
        // IfMatch: bytes swapped in after they were hashed must never reach their content address.
        await client.send(
          new CopyObjectCommand({
            Bucket: bucket,
            Key: to,
            CopySource: copySource(bucket, from),
            CopySourceIfMatch: options?.ifVersion,
          }),
        );
      }
      return { created };
    },

    async delete(key) {
      assertSafeKey(key);
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },

    async probe() {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "blobs/", MaxKeys: 1 }));
      return (page.KeyCount ?? page.Contents?.length ?? 0) > 0 ? "present" : "empty";
    },

    async *listOlderThan(prefix, before) {
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }));
        for (const object of page.Contents ?? []) {
          if (object.Key && object.LastModified && object.LastModified.getTime() < before) yield object.Key;
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },

    async collect(key, before, unreferenced) {
      assertSafeKey(key);
      let head;
      try {
        head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
      if ((head.LastModified?.getTime() ?? Infinity) >= before || !(await unreferenced())) return false;
      await store.delete(key);
      return true;
    },

    async presignRead(key, { expiresIn, method = "GET", contentType, cacheUntil, signingDate }) {
      assertSafeKey(key);
      // An absolute expiry, not a max-age: a redirect cached and followed later must not start a fresh lifetime.
      const overrides = {
        ResponseContentType: contentType,
        ...(cacheUntil && { ResponseCacheControl: "private", ResponseExpires: cacheUntil }),
      };
      const command =
        method === "HEAD" ? new HeadObjectCommand({ Bucket: bucket, Key: key, ...overrides }) : new GetObjectCommand({ Bucket: bucket, Key: key, ...overrides });
      return getSignedUrl(client, command, { expiresIn, signingDate });
    },

    async presignPost(key, { contentType, size, expiresIn }) {
      assertSafeKey(key);
      const { url, fields } = await createPresignedPost(client, {
        Bucket: bucket,
        Key: key,
        Conditions: [
          ["eq", "$Content-Type", contentType],
          ["content-length-range", size, size],
        ],
        Fields: { "Content-Type": contentType },
        Expires: expiresIn,
      });
      return { url, fields };
    },
  };
  return store;
}
