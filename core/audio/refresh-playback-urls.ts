/**
 * A stored answer with its playback URLs signed again at `now`. An idempotent replay answers the stored body up to 24
 * hours after it was first sent, but a playback URL in it lives an hour: replayed as stored, the post's audio would
 * not play. Only `exp` and `sig` of this deployment's playback URLs change; the rest is the stored answer.
 */
import { parseBlobKey } from "../blobs/blob-key";
import { playbackUrlPrefix, signPlaybackUrl } from "./playback-url";

export interface RefreshOptions {
  /** SVC_PUBLIC_BASE_URL */
  baseUrl: string;
  secret: string;
  now: Date;
}

export const refreshPlaybackUrls = (answer: unknown, options: RefreshOptions): unknown => {
  const prefix = playbackUrlPrefix(options.baseUrl);
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") {
      if (!value.startsWith(prefix)) return value;
      const key = new URLSearchParams(value.slice(prefix.length)).get("url");
      return key && parseBlobKey(key) ? signPlaybackUrl({ ...options, key }) : value;
    }
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, walk(item)]));
    return value;
  };
  return walk(answer);
};
