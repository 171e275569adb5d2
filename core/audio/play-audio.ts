/** `GET|HEAD /api/v1/audio`: capability check, rendition choice and MIME type lookup, then serve. */
import { isOwnRendition, renditionKey } from "../blobs/blob-key";
import type { BlobStore } from "../blobs/blob-store";
import { DomainError, validationError } from "../domain-error";
import type { HttpResponse } from "../http-message/http-message";
import { DependencyUnavailableError } from "../invocation/dependency-unavailable";
import { ProviderError } from "../providers/provider-port";
import type { Sql } from "../sql/port";
import { isAcceptedMimeType } from "../records/accepted-types";
import { findBlob } from "./blob-records";
import type { RenditionBuilder } from "../providers/rendition-builder";
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
  /** The request's If-None-Match header. */
  ifNoneMatch?: string;
  /** The request's If-Range header. */
  ifRange?: string;
  now: Date;
  /** Present when the rendition service is configured: a missing mp3 rendition is built, not a 404. */
  renditions?: RenditionBuilder;
}

function parseFormat(query: URLSearchParams): PlaybackFormat | undefined {
  const format = query.get("format");
  if (format === null) return undefined;
  if ((playbackFormats as readonly string[]).includes(format)) return format as PlaybackFormat;
  throw validationError(`unknown format ${JSON.stringify(format)}`, [{ path: ["format"], message: `must be one of: ${playbackFormats.join(", ")}` }]);
}

/**
 * The signature is checked before `format`, so an unsigned caller learns nothing. With `format=mp3` an existing
 * rendition is served (an mp3 upload's is the upload); a miss is built when the rendition service is configured, and
 * is 404 when it is not.
 */
export async function playAudio({ store, sql, secret, query, method, range, ifNoneMatch, ifRange, now, renditions }: PlayAudioOptions): Promise<HttpResponse> {
  const playback = verifyPlayback(query, secret, now);
  const format = parseFormat(query);
  const blob = await findBlob(sql, playback.appId, playback.cid);
  if (!blob) throw new DomainError("NOT_FOUND", "audio not found");
  // An mp3 upload is its own mp3 rendition (a render copies it): its bytes are served, with the rendition's tag.
  const ownRendition = format !== undefined && isOwnRendition(blob.mimeType, format);
  const target = format
    ? { key: ownRendition ? playback.key : renditionKey(playback.key, format), mimeType: "audio/mpeg", etag: `"${playback.cid}.${format}"` }
    : { key: playback.key, mimeType: blob.mimeType, etag: `"${playback.cid}"` };
  if (format && !ownRendition && !(await store.stat(target.key))) {
    if (!renditions) throw new DomainError("NOT_FOUND", "no mp3 rendition of this audio, and no rendition service is configured to build one");
    if (isAcceptedMimeType(blob.mimeType)) await buildRendition(renditions, { appId: playback.appId, cid: playback.cid, mimeType: blob.mimeType });
  }
  return serveAudio({ store, ...target, range, ifNoneMatch, ifRange, method, exp: playback.exp, now });
}

async function buildRendition(renditions: RenditionBuilder, source: Parameters<RenditionBuilder["buildMp3"]>[0]): Promise<void> {
  try {
    await renditions.buildMp3(source);
  } catch (error) {
    // Unreachable, failing or slow (a reset, a 5xx, a timeout): an outage of the rendition service, which the
    // invocation logs once per outage (docs/operations.md#where-to-look) and answers 503 SERVICE_UNAVAILABLE.
    if (error instanceof ProviderError && error.disposition === "retry") throw new DependencyUnavailableError("rendition", error);
    throw error;
  }
}
