/**
 * Direct-to-S3 uploads for S3 deployments, where API Gateway cannot carry 25 MiB:
 * `POST /api/v1/audio/uploads` hands out a presigned POST to a staging key, and
 * `POST /api/v1/audio/uploads/{uploadId}/complete` streams the staged object once (hash, sniff, measure),
 * then moves it to its content address. On the filesystem store both answer 404.
 */
import { randomUUID } from "node:crypto";
import { blobKey } from "../blobs/blob-key";
import type { BlobStore, S3BlobStore } from "../blobs/blob-store";
import { DomainError, validationError } from "../domain-error";
import type { Sql } from "../sql/port";
import { maxUploadBytes } from "../records/accepted-types";
import { blobRef } from "./blob-ref";
import { type IngestedAudio, recordOrTakeBack } from "./ingest-audio";
import { assertAcceptedMimeType, scanAudio } from "./scan-audio";
import { claimUpload, deleteUpload, insertUpload, markUploadCompleted, releaseUpload } from "./upload-records";
import type * as z from "zod";
import type { createUploadResponseSchema } from "./audio-route-schemas";
import { fileTooLarge } from "./file-too-large";
import type { Logger } from "../observability/logger";

/** How long the presigned POST accepts the bytes. */
export const uploadWindowSeconds = 900;
/** A completion may come this long after the window closed (a slow upload that started in time). */
export const completionGraceSeconds = 3600;

export type CreatedUpload = z.output<typeof createUploadResponseSchema>;

const s3Only = (store: BlobStore): S3BlobStore => {
  if (store.kind !== "s3") throw new DomainError("NOT_FOUND", "direct uploads exist only on S3 deployments; use POST /api/v1/audio/upload");
  return store;
};

export interface CreateUploadOptions {
  store: BlobStore;
  sql: Sql;
  appId: string;
  actor: string;
  mimeType: string;
  size: number;
  now: Date;
}

export async function createUpload({ store, sql, appId, actor, mimeType, size, now }: CreateUploadOptions): Promise<CreatedUpload> {
  const s3 = s3Only(store);
  assertAcceptedMimeType(mimeType);
  if (!Number.isSafeInteger(size) || size < 1) throw validationError("size must be a positive integer", [{ path: ["size"], message: "Invalid size" }]);
  if (size > maxUploadBytes) throw fileTooLarge(maxUploadBytes);
  const uploadId = randomUUID();
  const stagingKey = `staging/${appId}/${uploadId}`;
  const expiresAt = new Date(now.getTime() + uploadWindowSeconds * 1000);
  // The policy pins the exact Content-Type and exactly the declared size; S3 refuses any other POST.
  const post = await s3.presignPost(stagingKey, { contentType: mimeType, size, expiresIn: uploadWindowSeconds });
  await insertUpload(sql, { uploadId, appId, actor, mimeType, size, stagingKey, expiresAt });
  return { uploadId, url: post.url, fields: post.fields, expiresAt: expiresAt.toISOString() };
}

export interface CompleteUploadOptions {
  store: BlobStore;
  sql: Sql;
  appId: string;
  actor: string;
  uploadId: string;
  now: Date;
  /** Told about cleanup that failed after the answer was decided (with the request id, through the invocation's logger). */
  log?: Pick<Logger, "warn" | "error">;
}

/**
 * Whether a completion's failure is the bytes' own (their type, size or content, or an upload past its window),
 * which ends the upload. Any other (a resuming database's 503, a lost race with the store janitor, a crashed hash
 * worker) leaves it to be retried: the client retries a 503, and a 404 then would lose bytes it has sent.
 */
const refusesTheBytes = (error: unknown): boolean =>
  error instanceof DomainError && ["UNSUPPORTED_MEDIA_TYPE", "FILE_TOO_LARGE", "VALIDATION_ERROR", "NOT_FOUND"].includes(error.code);

/**
 * Completes once, and answers its retries: the row is claimed first, so a second completion while the first runs is
 * told to retry, and one after it is answered the same blob (the first answer may have been lost to a deadline, a
 * dropped connection or a frozen Lambda). Refused bytes (type, size, content) are deleted with the row; a call before
 * the bytes arrived, or one failing for an unexpected reason, gives the claim back so it can be retried.
 */
export async function completeUpload({ store, sql, appId, actor, uploadId, now, log }: CompleteUploadOptions): Promise<IngestedAudio> {
  const s3 = s3Only(store);
  const claim = await claimUpload(sql, uploadId, appId, actor);
  if (!claim) throw new DomainError("NOT_FOUND", "unknown upload");
  if (claim.state === "busy") throw new DomainError("SERVICE_UNAVAILABLE", "this upload is being completed by another request; retry in a few seconds");
  const { upload } = claim;
  if (claim.state === "completed") {
    const { cid, durationMs } = claim.completed;
    const { mimeType } = upload;
    assertAcceptedMimeType(mimeType);
    return { blob: blobRef(cid, mimeType, upload.size), key: blobKey(appId, cid), durationMs };
  }
  const late = now.getTime() > upload.expiresAt.getTime() + completionGraceSeconds * 1000;

  let staged;
  try {
    staged = await s3.read(upload.stagingKey);
  } catch (error) {
    await releaseUpload(sql, uploadId).catch(() => undefined);
    throw error;
  }
  if (!staged) {
    if (late) {
      await deleteUpload(sql, uploadId);
      throw new DomainError("NOT_FOUND", "unknown upload");
    }
    await releaseUpload(sql, uploadId);
    throw validationError("nothing has been uploaded for this uploadId yet");
  }

  try {
    if (late) throw new DomainError("NOT_FOUND", "unknown upload");
    if (staged.contentType !== undefined && staged.contentType !== upload.mimeType) {
      throw new DomainError("UNSUPPORTED_MEDIA_TYPE", `the stored object is ${staged.contentType}, not the declared ${upload.mimeType}`);
    }
    if (staged.size > maxUploadBytes) throw fileTooLarge(maxUploadBytes);
    if (staged.size !== upload.size) throw validationError(`uploaded ${staged.size} bytes, declared ${upload.size}`);
    const { mimeType } = upload;
    assertAcceptedMimeType(mimeType);
    const scan = await scanAudio({ source: staged.stream, mimeType });
    const key = blobKey(appId, scan.cid);
    // Copied, not moved: until the row is recorded the staged object stays, so a completion that fails on the
    // database can be retried, and the copy it made is taken back.
    const { created } = await s3.copy(upload.stagingKey, key, { ifVersion: staged.version });
    await recordOrTakeBack(s3, sql, key, created, { appId, cid: scan.cid, mimeType: upload.mimeType, size: scan.size, durationMs: scan.durationMs });
    await markUploadCompleted(sql, uploadId, scan.cid);
    await s3.delete(upload.stagingKey).catch((error: unknown) => log?.warn("completed upload's staged object not deleted", { uploadId, error: String(error) }));
    return { blob: blobRef(scan.cid, mimeType, scan.size), key, durationMs: scan.durationMs };
  } catch (error) {
    staged.stream.destroy();
    if (refusesTheBytes(error)) {
      await deleteUpload(sql, uploadId);
      await s3.delete(upload.stagingKey);
    } else {
      await releaseUpload(sql, uploadId).catch((release: unknown) =>
        log?.warn("failed completion's claim not given back; a retry can take it over once it lapses", { uploadId, error: String(release) }),
      );
    }
    throw error;
  }
}
