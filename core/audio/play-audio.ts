/** `GET|HEAD /api/v1/audio`: capability check, rendition choice and MIME type lookup, then serve. */
import { renditionKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import { DomainError, validationError } from "../domain-error";
import type { HttpResponse } from "../http/types";
import type { Sql } from "../sql/port";
import { findBlob } from "./blob-records";
import { verifyPlayback } from "./playback-url";
import { serveAudio } from "./serve-audio";

export const playbackFormats = ["mp3"] as const;
export type PlaybackFormat = (typeof playbackFormats)[number];

export interface PlayAudioOptions {
  store: BlobStore;
  sql: Sql;
  /** SVC_PLAYBACK_SIGNING_KEY */
  secret: string;
  query: URLSearchParams;
  method: string;
  /** The request's Range header. */
  range?: string;
  now: Date;
}

function parseFormat(query: URLSearchParams): PlaybackFormat | undefined {
  const format = query.get("format");
  if (format === null) return undefined;
  if ((playbackFormats as readonly string[]).includes(format)) return format as PlaybackFormat;
  throw validationError(`unknown format ${JSON.stringify(format)}`, [{ path: ["format"], message: `must be one of: ${playbackFormats.join(", ")}` }]);
}

/**
 * The signature is checked before `format`, so an unsigned caller learns nothing. With `format=mp3` only an existing
 * rendition is served (no rendition service is wired yet): a miss is 404.
 */
export async function playAudio({ store, sql, secret, query, method, range, now }: PlayAudioOptions): Promise<HttpResponse> {
  const playback = verifyPlayback(query, secret, now);
  const format = parseFormat(query);
  const blob = await findBlob(sql, playback.appId, playback.cid);
  if (!blob) throw new DomainError("NOT_FOUND", "audio not found");
  const target = format
    ? { key: renditionKey(playback.key, format), mimeType: "audio/mpeg", etag: `"${playback.cid}.${format}"` }
    : { key: playback.key, mimeType: blob.mimeType, etag: `"${playback.cid}"` };
  return serveAudio({ store, ...target, range, method, exp: playback.exp, now });
}
